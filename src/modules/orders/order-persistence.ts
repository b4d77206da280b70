import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import type { EngineEvent, MatchingEngine, RejectReason } from '../../engine';
import { LedgerMove, LedgerService } from '../ledger/ledger.service';
import { KeelError } from '../../platform/errors';
import { insertRowsPart, rowsOf, runAsOneStatement, StatementPart } from '../../platform/db/one-statement';
import { formatScaled } from '../../platform/decimal';
import type { MarketService, TradingRules } from '../markets/market.service';
import { OrderModel, TradeModel } from './order.model';
import { OrderSide, OrderStatus, SettlementStatus } from './order.types';
import { priceOf, quantityOf } from './order-units';
import type { StepResult, UnitOfWork } from '../../platform/db/unit-of-work';

/**
 * One market's engine and the money state of its resting orders, both rebuilt from the open
 * orders in PostgreSQL whenever they are (re)loaded. They change only with a committed command;
 * a failed commit drops the runtime.
 */
export interface Runtime {
  rules: TradingRules;
  engine: MatchingEngine;
  resting: Map<string, Working>;
  /** The market sequence PostgreSQL holds: each commit moves it from this value, or is refused. */
  committedSequence: number;
}

/** An order a command touches, with its money state as the command changes it. */
export interface Working {
  id: string;
  isNew: boolean;
  organizationId: string;
  walletId: string;
  side: OrderSide;
  lockAssetId: string | null;
  lockedAmount: bigint;
  remainingLots: bigint;
  filledLots: bigint;
  filledNotional: bigint;
  feesPaid: bigint;
  status: OrderStatus;
  statusReason: string | null;
  restSequence: number | null;
}

/** A live order's record as the runtime works with it. */
export function workingFromRow(r: OrderModel): Working {
  return {
    id: r.id,
    isNew: false,
    organizationId: r.organizationId,
    walletId: r.walletId,
    side: r.side as OrderSide,
    lockAssetId: r.lockAssetId,
    lockedAmount: BigInt(r.lockedAmount),
    remainingLots: BigInt(r.remainingLots),
    filledLots: BigInt(r.filledLots),
    filledNotional: BigInt(r.filledNotional),
    feesPaid: BigInt(r.feesPaid),
    status: r.status as OrderStatus,
    statusReason: r.statusReason,
    restSequence: r.restSequence === null ? null : Number(r.restSequence),
  };
}

export interface NewOrder {
  working: Working;
  row: Partial<OrderModel>;
  lock: bigint;
}

/** One command matched in memory, waiting for its commit. */
export interface Matched {
  events: EngineEvent[];
  order: NewOrder | null;
  rejected?: RejectReason;
  /** The request's idempotency step this command completes, and the result recorded for it. */
  record?: StepResult;
}

/**
 * Writes what a run of commands did, in their order, as one statement (one round trip, atomic):
 * new order rows, every touched order's final state, trades, the ledger moves (summed per balance
 * row) and the market's sequence. Then brings the runtime's resting orders up to date. Returns the
 * new orders' rows as written. The commands' idempotency results are recorded in the same statement.
 */
export async function persistCommands(db: Knex, ledger: LedgerService, markets: MarketService, uow: UnitOfWork, marketId: string, rt: Runtime, commands: Matched[]): Promise<Map<string, OrderModel>> {
  const { rules } = rt;
  const market = rules.market;
  const working = new Map<string, Working>();
  const newRows = new Map<string, Partial<OrderModel>>();
  const moves: LedgerMove[] = [];
  for (const { order } of commands) {
    if (!order) continue;
    working.set(order.working.id, order.working);
    newRows.set(order.working.id, order.row);
    if (order.lock > 0n) {
      moves.push({ organizationId: order.working.organizationId, walletId: order.working.walletId, assetId: order.working.lockAssetId!, kind: 'lock', available: -order.lock, locked: order.lock, reference: `order:${order.working.id}` });
    }
  }
  const events = commands.flatMap((c) => c.events);
  const must = (id: string): Working => {
    let w = working.get(id);
    if (!w) {
      w = rt.resting.get(id);
      if (!w) throw new Error(`Order ${id} is in the book but not in the record`);
      working.set(id, w);
    }
    return w;
  };
  const release = (w: Working) => {
    if (w.lockedAmount > 0n) {
      moves.push({ organizationId: w.organizationId, walletId: w.walletId, assetId: w.lockAssetId!, kind: 'unlock', available: w.lockedAmount, locked: -w.lockedAmount, reference: `order:${w.id}` });
      w.lockedAmount = 0n;
    }
  };
  const trades: Partial<TradeModel>[] = [];

  for (const e of events) {
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
        let makerFee = BigInt(e.makerFee) * rules.notionalUnit;
        let takerFee = BigInt(e.takerFee) * rules.notionalUnit;
        if (buyer.lockedAmount < cost) throw new Error(`Order ${buyer.id}: lock ${buyer.lockedAmount} below trade cost ${cost}`);
        // Per-fill fee rounding (or a fee raised while the order rested) can exceed what the
        // order locked for fees; the venue then charges what is left of the lock.
        const buyerFeeWanted = buyer === taker ? takerFee : makerFee;
        const buyerFee = buyer.lockedAmount - cost < buyerFeeWanted ? buyer.lockedAmount - cost : buyerFeeWanted;
        if (buyer === taker) takerFee = buyerFee;
        else makerFee = buyerFee;
        const sellerFee = seller === taker ? takerFee : makerFee;
        const tradeId = randomUUID();
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
        if (seller.lockedAmount < 0n) throw new Error(`Order ${seller.id}: lock below zero`);
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
          marketId,
          sequence: String(e.sequence),
          makerOrderId: maker.id,
          takerOrderId: taker.id,
          makerWalletId: maker.walletId,
          takerWalletId: taker.walletId,
          takerSide: e.takerSide,
          price: priceOf(rules, BigInt(e.price)),
          quantity: quantityOf(rules, lots),
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

  const now = new Date();
  const inserts: Partial<OrderModel>[] = [];
  const updates: Partial<OrderModel>[] = [];
  for (const w of working.values()) {
    const state = {
      remainingLots: String(w.remainingLots),
      filledLots: String(w.filledLots),
      filledNotional: String(w.filledNotional),
      feesPaid: String(w.feesPaid),
      status: w.status,
      statusReason: w.statusReason,
      lockedAmount: String(w.lockedAmount),
      restSequence: w.restSequence === null ? null : String(w.restSequence),
      updatedAt: now,
    };
    if (w.isNew) inserts.push({ ...newRows.get(w.id)!, ...state, lockAssetId: w.lockAssetId, createdAt: now });
    else updates.push({ id: w.id, ...state });
  }
  const parts: StatementPart[] = [];
  if (updates.length) {
    const changed = rowsOf('orders', updates);
    parts.push(
      { name: 'orders_changes', sql: `SELECT * FROM ${changed.sql}`, bindings: changed.bindings },
      {
        // ANY(ARRAY(...)) makes PostgreSQL look the rows up by primary key: it cannot see how few
        // rows the jsonb holds and would otherwise scan the whole table.
        name: 'orders_updated',
        sql: `UPDATE orders AS o
                 SET remaining_lots = v.remaining_lots, filled_lots = v.filled_lots, filled_notional = v.filled_notional, fees_paid = v.fees_paid,
                     status = v.status, status_reason = v.status_reason, locked_amount = v.locked_amount, rest_sequence = v.rest_sequence, updated_at = v.updated_at
                FROM orders_changes AS v
               WHERE o.id = v.id AND o.id = ANY(ARRAY(SELECT id FROM orders_changes))`,
        bindings: [],
      },
    );
  }
  if (inserts.length) parts.push(insertRowsPart('orders_created', 'orders', inserts));
  if (trades.length) parts.push(insertRowsPart('trades_created', 'trades', trades.map((t) => ({ ...t, createdAt: now }))));
  parts.push(...ledger.statementParts(moves), markets.sequencePart(marketId, rt.committedSequence, rt.engine.sequence, rules.rulesVersion));
  const records = commands.flatMap((c) => (c.record ? [c.record] : []));
  if (records.length) parts.push(uow.resultsPart(records));
  try {
    await runAsOneStatement(db, parts);
  } catch (e) {
    if (LedgerService.isInsufficientFunds(e)) throw new KeelError('INSUFFICIENT_FUNDS', 'Insufficient balance');
    throw e;
  }
  rt.committedSequence = rt.engine.sequence;
  for (const w of working.values()) {
    const resting = (w.status === OrderStatus.OPEN || w.status === OrderStatus.PARTIALLY_FILLED) && w.restSequence !== null;
    if (resting) rt.resting.set(w.id, { ...w, isNew: false });
    else rt.resting.delete(w.id);
  }
  // The new orders as committed, so the answers need not read them back.
  return new Map(inserts.map((row) => [row.id!, row as OrderModel]));
}
