import type { Command, EngineEvent, MarketRules, PlaceOrder, RestingOrder } from '../../../src/engine/types';

interface Resting extends RestingOrder {
  arrival: number;
}

/**
 * A deliberately naive matcher with the engine's rules: every step re-sorts a plain array.
 * It exists only to be obviously right; the property tests hold the engine to it.
 */
export class ReferenceMatcher {
  private book: Resting[] = [];
  private arrivals = 0;
  private seq = 0;

  constructor(private readonly rules: MarketRules) {}

  apply(command: Command): EngineEvent[] {
    const out: EngineEvent[] = [];
    const emit = (e: Record<string, unknown>) => out.push({ ...e, sequence: ++this.seq } as EngineEvent);
    if (command.kind === 'cancel') {
      const found = this.book.find((o) => o.id === command.id);
      if (!found) emit({ type: 'rejected', orderId: command.id, reason: 'ORDER_NOT_FOUND' });
      else {
        this.book = this.book.filter((o) => o !== found);
        emit({ type: 'cancelled', orderId: found.id, remaining: found.remaining, reason: 'USER', side: found.side, price: found.price });
      }
      return out;
    }
    const o = command;
    const reason = this.reject(o);
    if (reason) {
      emit({ type: 'rejected', orderId: o.id, reason });
      return out;
    }
    emit({ type: 'accepted', orderId: o.id });
    const queue = this.makersFor(o);
    if (o.timeInForce === 'FOK') {
      let available = 0;
      for (const m of queue) {
        if (m.owner === o.owner) break;
        available += m.remaining;
      }
      if (available < o.quantity) {
        emit({ type: 'cancelled', orderId: o.id, remaining: o.quantity, reason: 'FOK_NOT_FILLABLE' });
        return out;
      }
    }
    let remaining = o.quantity;
    let selfTrade = false;
    for (const m of queue) {
      if (remaining === 0) break;
      if (m.owner === o.owner) {
        selfTrade = true;
        break;
      }
      const q = Math.min(m.remaining, remaining);
      emit({
        type: 'trade', makerOrderId: m.id, takerOrderId: o.id, makerOwner: m.owner, takerOwner: o.owner, takerSide: o.side,
        price: m.price, quantity: q, makerFee: this.fee(m.price, q, this.rules.makerFeePpm), takerFee: this.fee(m.price, q, this.rules.takerFeePpm),
      });
      m.remaining -= q;
      remaining -= q;
      if (m.remaining === 0) {
        this.book = this.book.filter((x) => x !== m);
        emit({ type: 'filled', orderId: m.id });
      }
    }
    if (remaining === 0) emit({ type: 'filled', orderId: o.id });
    else if (selfTrade) emit({ type: 'cancelled', orderId: o.id, remaining, reason: 'SELF_TRADE' });
    else if (o.type === 'MARKET') emit({ type: 'cancelled', orderId: o.id, remaining, reason: 'NO_LIQUIDITY' });
    else if (o.timeInForce !== 'GTC') emit({ type: 'cancelled', orderId: o.id, remaining, reason: 'IOC_REMAINDER' });
    else {
      this.book.push({ id: o.id, owner: o.owner, side: o.side, price: o.price!, remaining, arrival: ++this.arrivals });
      emit({ type: 'rested', orderId: o.id, side: o.side, price: o.price, remaining });
    }
    return out;
  }

  /** Bids best first, then asks best first; time priority within a price. */
  snapshot(): RestingOrder[] {
    const strip = ({ arrival: _a, ...rest }: Resting) => rest;
    const bids = this.book.filter((o) => o.side === 'BUY').sort((a, b) => b.price - a.price || a.arrival - b.arrival);
    const asks = this.book.filter((o) => o.side === 'SELL').sort((a, b) => a.price - b.price || a.arrival - b.arrival);
    return [...bids, ...asks].map(strip);
  }

  /** The rate's share of the trade's quote amount in base units, rounded up to a whole base unit. */
  private fee(price: number, quantity: number, ppm: number): bigint {
    const share = BigInt(price) * BigInt(quantity) * this.rules.notionalUnit * BigInt(ppm);
    const whole = share / 1_000_000n;
    return share % 1_000_000n === 0n ? whole : whole + 1n;
  }

  private makersFor(o: PlaceOrder): Resting[] {
    const crosses = (m: Resting) => o.type === 'MARKET' || (o.side === 'BUY' ? m.price <= o.price! : m.price >= o.price!);
    const opposite = this.book.filter((m) => m.side !== o.side && crosses(m));
    return opposite.sort((a, b) => (o.side === 'BUY' ? a.price - b.price : b.price - a.price) || a.arrival - b.arrival);
  }

  private reject(o: PlaceOrder): string | null {
    if (!Number.isSafeInteger(o.quantity) || o.quantity <= 0) return 'INVALID_QUANTITY';
    if (this.book.some((m) => m.id === o.id)) return 'DUPLICATE_ORDER_ID';
    if (o.type === 'MARKET') return o.postOnly ? 'POST_ONLY_WOULD_TAKE' : null;
    if (o.price === undefined || !Number.isSafeInteger(o.price) || o.price <= 0) return 'INVALID_PRICE';
    if (o.price * o.quantity < this.rules.minNotional) return 'BELOW_MIN_NOTIONAL';
    if (o.postOnly && this.makersFor(o).length > 0) return 'POST_ONLY_WOULD_TAKE';
    return null;
  }
}
