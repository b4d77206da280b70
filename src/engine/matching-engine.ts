import { feeCeil } from './fees';
import { BookSide, OrderNode } from './order-book';
import { hashOf, OrderIndex } from './order-index';
import type { CancelReason, Command, DepthLevel, EngineEvent, MarketRules, PlaceOrder, RejectReason, RestingOrder, Side } from './types';

/**
 * One market's central limit order book with price-time priority. Pure and synchronous: the same
 * commands from the same state give the same events.
 *
 * Rules:
 * - A trade happens at the resting (maker) order's price.
 * - LIMIT GTC rests what it cannot fill; IOC cancels the rest (IOC_REMAINDER); FOK fills completely
 *   or not at all (FOK_NOT_FILLABLE, nothing traded). MARKET takes what there is and never rests
 *   (NO_LIQUIDITY for the rest); its timeInForce is ignored except FOK.
 * - postOnly: rejected (POST_ONLY_WOULD_TAKE) if it would trade on arrival; otherwise rests.
 * - Self-trade prevention, "cancel taker": when the next resting order to match belongs to the
 *   incoming order's owner, the incoming order's remainder is cancelled (SELF_TRADE); what it
 *   already traded stands and the resting order is untouched. A FOK order counts only the liquidity
 *   ahead of the owner's own first resting order.
 * - Fees: maker and taker rates in parts per million of the trade's notional in base units of the
 *   quote asset (ticks × lots × notionalUnit), rounded up to a whole base unit (feeCeil).
 * - Every event carries the market's next sequence number.
 * - What a BUY locks before it is placed is quoted here too (buyLock), from the same fee rules.
 */
export class MatchingEngine {
  private readonly bids = new BookSide('BUY');
  private readonly asks = new BookSide('SELL');
  private readonly orders = new OrderIndex<OrderNode>();
  private seq: number;

  constructor(
    private readonly rules: MarketRules,
    startSequence = 0,
  ) {
    this.seq = startSequence;
  }

  get sequence(): number {
    return this.seq;
  }

  apply(command: Command, out: EngineEvent[] = []): EngineEvent[] {
    if (command.kind === 'cancel') this.cancel(command.id, out);
    else this.place(command, out);
    return out;
  }

  /** Rebuilds resting orders, in the priority order given (as `snapshot()` lists them). */
  restore(orders: RestingOrder[]): void {
    for (const o of orders) {
      const node = new OrderNode(o.id, hashOf(o.id), o.owner, o.side, o.price, o.remaining);
      this.orders.add(node);
      this.sideOf(o.side).append(node);
    }
  }

  snapshot(): RestingOrder[] {
    return [...this.bids.snapshot(), ...this.asks.snapshot()];
  }

  depth(levels: number): { bids: DepthLevel[]; asks: DepthLevel[] } {
    return { bids: this.bids.depth(levels), asks: this.asks.depth(levels) };
  }

  /** The resting quantity and order count at one price of one side (zero when no order rests there). */
  level(side: Side, price: number): { quantity: number; orders: number } {
    return this.sideOf(side).levelAt(price);
  }

  bestBid(): number | null {
    return this.bids.best()?.price ?? null;
  }

  bestAsk(): number | null {
    return this.asks.best()?.price ?? null;
  }

  order(id: string): RestingOrder | null {
    const n = this.orders.get(id);
    return n ? { id: n.id, owner: n.owner, side: n.side, price: n.price, remaining: n.remaining } : null;
  }

  /**
   * Base units of the quote asset a BUY of `lots` must lock so that its fills and fees are always
   * covered. A LIMIT order at `price`: its notional plus the fee at the higher rate (it may trade as
   * maker or as taker), rounded up once on the whole; fees rounded up fill by fill, or raised while it rests,
   * may come to more, and the order book's fill accounting then charges less. A MARKET order: the
   * cost of taking `lots` from the asks as they stand, plus the taker fee rounded up per resting
   * order; what it does not spend is released when it ends.
   */
  buyLock(lots: number, price?: number): bigint {
    if (price !== undefined) {
      const notional = BigInt(price) * BigInt(lots) * this.rules.notionalUnit;
      return notional + feeCeil(notional, Math.max(this.rules.makerFeePpm, this.rules.takerFeePpm));
    }
    let remaining = BigInt(lots);
    let total = 0n;
    for (const level of this.asks.depth(Number.MAX_SAFE_INTEGER)) {
      if (remaining === 0n) break;
      const take = BigInt(level.quantity) < remaining ? BigInt(level.quantity) : remaining;
      const notional = BigInt(level.price) * take * this.rules.notionalUnit;
      total += notional + feeCeil(notional, this.rules.takerFeePpm) + BigInt(level.orders - 1);
      remaining -= take;
    }
    return total;
  }

  /** Why the engine would reject this placement now (the same checks `apply` makes), or null. */
  check(order: PlaceOrder): RejectReason | null {
    return this.validate(order, hashOf(order.id));
  }

  private place(order: PlaceOrder, out: EngineEvent[]): void {
    const hash = hashOf(order.id);
    const reason = this.validate(order, hash);
    if (reason) {
      out.push({ type: 'rejected', orderId: order.id, reason, sequence: ++this.seq });
      return;
    }
    const isLimit = order.type === 'LIMIT';
    const limit = isLimit ? order.price! : order.side === 'BUY' ? Infinity : -Infinity;
    const opposite = order.side === 'BUY' ? this.asks : this.bids;
    out.push({ type: 'accepted', orderId: order.id, sequence: ++this.seq });

    if (order.timeInForce === 'FOK' && this.fillable(opposite, order.owner, limit) < order.quantity) {
      out.push({ type: 'cancelled', orderId: order.id, remaining: order.quantity, reason: 'FOK_NOT_FILLABLE', sequence: ++this.seq });
      return;
    }

    let remaining = order.quantity;
    let stopped: CancelReason | null = null;
    while (remaining > 0) {
      const level = opposite.best();
      if (!level || opposite.better(limit, level.price)) break;
      const maker = level.head!;
      if (maker.owner === order.owner) {
        stopped = 'SELF_TRADE';
        break;
      }
      const quantity = maker.remaining < remaining ? maker.remaining : remaining;
      const notional = BigInt(maker.price * quantity) * this.rules.notionalUnit;
      out.push({
        type: 'trade',
        makerOrderId: maker.id,
        takerOrderId: order.id,
        makerOwner: maker.owner,
        takerOwner: order.owner,
        takerSide: order.side,
        price: maker.price,
        quantity,
        makerFee: feeCeil(notional, this.rules.makerFeePpm),
        takerFee: feeCeil(notional, this.rules.takerFeePpm),
        sequence: ++this.seq,
      });
      remaining -= quantity;
      if (quantity === maker.remaining) {
        opposite.remove(maker);
        this.orders.remove(maker);
        out.push({ type: 'filled', orderId: maker.id, sequence: ++this.seq });
      } else {
        maker.remaining -= quantity;
        level.quantity -= quantity;
      }
    }

    if (remaining === 0) {
      out.push({ type: 'filled', orderId: order.id, sequence: ++this.seq });
    } else if (stopped || !isLimit || order.timeInForce !== 'GTC') {
      const why: CancelReason = stopped ?? (isLimit ? 'IOC_REMAINDER' : 'NO_LIQUIDITY');
      out.push({ type: 'cancelled', orderId: order.id, remaining, reason: why, sequence: ++this.seq });
    } else {
      const node = new OrderNode(order.id, hash, order.owner, order.side, order.price!, remaining);
      this.orders.add(node);
      this.sideOf(order.side).append(node);
      out.push({ type: 'rested', orderId: order.id, side: order.side, price: order.price!, remaining, sequence: ++this.seq });
    }
  }

  private cancel(id: string, out: EngineEvent[]): void {
    const node = this.orders.take(id);
    if (!node) {
      out.push({ type: 'rejected', orderId: id, reason: 'ORDER_NOT_FOUND', sequence: ++this.seq });
      return;
    }
    this.sideOf(node.side).remove(node);
    out.push({ type: 'cancelled', orderId: id, remaining: node.remaining, reason: 'USER', side: node.side, price: node.price, sequence: ++this.seq });
  }

  private validate(order: PlaceOrder, hash: number): RejectReason | null {
    if (!Number.isSafeInteger(order.quantity) || order.quantity <= 0) return 'INVALID_QUANTITY';
    if (this.orders.get(order.id, hash)) return 'DUPLICATE_ORDER_ID';
    if (order.type === 'MARKET') return order.postOnly ? 'POST_ONLY_WOULD_TAKE' : null;
    const price = order.price;
    if (price === undefined || !Number.isSafeInteger(price) || price <= 0) return 'INVALID_PRICE';
    if (!Number.isSafeInteger(price * order.quantity)) return 'INVALID_QUANTITY';
    if (price * order.quantity < this.rules.minNotional) return 'BELOW_MIN_NOTIONAL';
    if (order.postOnly) {
      const best = (order.side === 'BUY' ? this.asks : this.bids).best();
      if (best && !(order.side === 'BUY' ? price < best.price : price > best.price)) return 'POST_ONLY_WOULD_TAKE';
    }
    return null;
  }

  /** Quantity an incoming order could take up to `limit` before reaching its owner's own order. */
  private fillable(opposite: BookSide, owner: string, limit: number): number {
    let total = 0;
    for (let i = opposite.levels.length - 1; i >= 0; i--) {
      const level = opposite.levels[i];
      if (opposite.better(limit, level.price)) break;
      for (let n = level.head; n; n = n.next) {
        if (n.owner === owner) return total;
        total += n.remaining;
      }
    }
    return total;
  }

  private sideOf(side: Side): BookSide {
    return side === 'BUY' ? this.bids : this.asks;
  }
}
