import { randomUUID } from 'node:crypto';
import type { LedgerMove } from '../ledger';
import { formatMultiple, formatScaled } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import type { TradingRules } from '../markets';
import type { TradeModel } from './order.model';
import { OrderStatus, SettlementStatus } from './order.domain';
import type { Matched, Working } from './working-order';

/** A trade as it is recorded. */
export type TradeRecord = Pick<
  TradeModel,
  'id' | 'marketId' | 'sequence' | 'makerOrderId' | 'takerOrderId' | 'makerWalletId' | 'takerWalletId' | 'takerSide' | 'price' | 'quantity' | 'quoteAmount' | 'makerFee' | 'takerFee' | 'settlementBatchId' | 'settlementStatus'
>;

/**
 * A fill an order's lock cannot pay for (its cost, and a BUY's unfilled rest at its limit price).
 * Locks are sized so that this never happens: it means the record is broken, and only the command
 * that met it is refused (500 INTERNAL_ERROR, nothing written); the order stays as recorded.
 */
export class LockShortfall extends KeelError {
  constructor(
    readonly orderId: string,
    readonly locked: bigint,
    readonly needed: bigint,
  ) {
    super('INTERNAL_ERROR', 'An order this trade needs cannot pay for it from its locked funds; nothing was written');
  }
}

/**
 * The order book's fill accounting: what a run of matched commands does to the record (not on-chain
 * settlement, which is the settlement module's; nor settlement rules).
 */
export interface FillAccounting {
  /** Every order the commands touched, in its state after them (the new ones included). */
  orders: Working[];
  trades: TradeRecord[];
  /** Locks, fills, fees and releases, in event order. */
  moves: LedgerMove[];
}

/**
 * The engine's events of a run of commands, turned into order states and ledger moves. Pure: the
 * resting orders given are copied, never changed.
 *
 * Money per trade (fees are in the quote asset): the buyer's lock pays price × quantity + its fee
 * (no more than the lock can spare, `buyerFeeWithinLock`) and the buyer receives the base; the
 * seller's lock pays the base and the seller receives price × quantity − its fee; the venue
 * receives both fees. An order that leaves the book releases what is left of its lock. A lock
 * that cannot pay its fill is a broken record, refused with LockShortfall.
 */
export function accountFills(rules: TradingRules, resting: ReadonlyMap<string, Working>, commands: readonly Matched[], newTradeId: () => string = randomUUID): FillAccounting {
  const market = rules.market;
  const touched = new Map<string, Working>();
  const moves: LedgerMove[] = [];
  const trades: TradeRecord[] = [];
  for (const { order } of commands) {
    if (!order) continue;
    touched.set(order.working.id, { ...order.working });
    if (order.lock > 0n) {
      moves.push({ organizationId: order.working.organizationId, walletId: order.working.walletId, assetId: order.working.lockAssetId!, kind: 'lock', available: -order.lock, locked: order.lock, reference: `order:${order.working.id}` });
    }
  }
  const must = (id: string): Working => {
    let w = touched.get(id);
    if (!w) {
      const before = resting.get(id);
      if (!before) throw new Error(`Order ${id} is in the book but not in the record`);
      w = { ...before };
      touched.set(id, w);
    }
    return w;
  };
  const release = (w: Working) => {
    if (w.lockedAmount > 0n) {
      moves.push({ organizationId: w.organizationId, walletId: w.walletId, assetId: w.lockAssetId!, kind: 'unlock', available: w.lockedAmount, locked: -w.lockedAmount, reference: `order:${w.id}` });
      w.lockedAmount = 0n;
    }
  };

  for (const e of commands.flatMap((c) => c.events)) {
    switch (e.type) {
      case 'accepted':
        break;
      case 'rejected': {
        const w = must(e.orderId);
        w.status = OrderStatus.REJECTED;
        w.statusReason = e.reason;
        break;
      }
      case 'trade': {
        const maker = must(e.makerOrderId);
        const taker = must(e.takerOrderId);
        const buyer = e.takerSide === 'BUY' ? taker : maker;
        const seller = e.takerSide === 'BUY' ? maker : taker;
        const lots = BigInt(e.quantity);
        const notional = BigInt(e.price) * lots;
        const cost = notional * rules.notionalUnit;
        const base = lots * rules.lotUnits;
        let makerFee = e.makerFee;
        let takerFee = e.takerFee;
        const buyerFee = buyerFeeWithinLock(rules, buyer, lots, cost, buyer === taker ? takerFee : makerFee);
        if (buyer === taker) takerFee = buyerFee;
        else makerFee = buyerFee;
        if (seller.lockedAmount < base) throw new LockShortfall(seller.id, seller.lockedAmount, base);
        const sellerFee = seller === taker ? takerFee : makerFee;
        const tradeId = newTradeId();
        const ref = `trade:${tradeId}`;
        moves.push(
          { organizationId: buyer.organizationId, walletId: buyer.walletId, assetId: market.quoteAssetId, kind: 'fill', available: 0n, locked: -(cost + buyerFee), reference: ref },
          { organizationId: buyer.organizationId, walletId: buyer.walletId, assetId: market.baseAssetId, kind: 'fill', available: base, locked: 0n, reference: ref },
          { organizationId: seller.organizationId, walletId: seller.walletId, assetId: market.baseAssetId, kind: 'fill', available: 0n, locked: -base, reference: ref },
          { organizationId: seller.organizationId, walletId: seller.walletId, assetId: market.quoteAssetId, kind: 'fill', available: cost - sellerFee, locked: 0n, reference: ref },
          { organizationId: null, walletId: null, assetId: market.quoteAssetId, kind: 'fee', available: buyerFee + sellerFee, locked: 0n, reference: ref },
        );
        buyer.lockedAmount -= cost + buyerFee;
        seller.lockedAmount -= base;
        for (const [w, fee] of [
          [maker, makerFee],
          [taker, takerFee],
        ] as const) {
          w.filledLots += lots;
          w.filledNotional += notional;
          w.remainingLots -= lots;
          w.feesPaid += fee;
        }
        maker.status = OrderStatus.PARTIALLY_FILLED;
        trades.push({
          id: tradeId,
          marketId: market.id,
          sequence: String(e.sequence),
          makerOrderId: maker.id,
          takerOrderId: taker.id,
          makerWalletId: maker.walletId,
          takerWalletId: taker.walletId,
          takerSide: e.takerSide,
          price: formatMultiple(rules.tick, BigInt(e.price)),
          quantity: formatMultiple(rules.lot, lots),
          quoteAmount: formatScaled(cost, rules.quoteDecimals),
          makerFee: formatScaled(makerFee, rules.quoteDecimals),
          takerFee: formatScaled(takerFee, rules.quoteDecimals),
          settlementBatchId: null,
          settlementStatus: SettlementStatus.QUEUED,
        });
        break;
      }
      case 'rested': {
        const w = must(e.orderId);
        w.status = w.filledLots > 0n ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN;
        w.restSequence = e.sequence;
        break;
      }
      case 'filled': {
        const w = must(e.orderId);
        w.status = OrderStatus.FILLED;
        w.remainingLots = 0n;
        release(w);
        break;
      }
      case 'cancelled': {
        const w = must(e.orderId);
        w.status = e.reason === 'USER' || e.reason === 'SELF_TRADE' ? OrderStatus.CANCELLED : OrderStatus.EXPIRED;
        w.statusReason = e.reason;
        release(w);
        break;
      }
    }
  }
  return { orders: [...touched.values()], trades, moves };
}

/**
 * The buyer's fee on a fill: the engine's, capped so that what stays locked still pays for the
 * order's unfilled rest at its limit price. A LIMIT BUY locks its notional plus one fee rounded up
 * on the whole; fees rounded up fill by fill, or raised while it rested, can come to more, and the
 * venue then charges less (down to nothing) rather than take what the rest needs. A MARKET BUY
 * holds nothing back: it never rests, and its lock priced the asks it takes fill by fill.
 */
function buyerFeeWithinLock(rules: TradingRules, buyer: Working, lots: bigint, cost: bigint, fee: bigint): bigint {
  const held = (buyer.remainingLots - lots) * (buyer.priceTicks ?? 0n) * rules.notionalUnit;
  const spare = buyer.lockedAmount - cost - held;
  // A bid already short of its rest (fees taken from it before this cap existed) fills without a
  // fee while its lock pays the fill: refusing it would answer every seller reaching it 500.
  if (spare < 0n) {
    if (buyer.lockedAmount < cost) throw new LockShortfall(buyer.id, buyer.lockedAmount, cost);
    return 0n;
  }
  return fee < spare ? fee : spare;
}
