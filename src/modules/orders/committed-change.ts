import type { EngineEvent, MatchingEngine } from '../../engine';
import { formatMultiple } from '../../platform/decimal';
import type { TradingRules } from '../markets';
import { BookLevel, OrderSide, OrderStatus, SettlementStatus } from './order.domain';
import type { OrderModel } from './order.model';
import type { FillAccounting } from './fill-accounting';

/** The row of an order a commit created, its timestamps as the ISO text they travel as. */
export type CreatedOrderRow = Omit<Partial<OrderModel>, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string };

/** One order as a commit left it. `created` carries the whole row of an order the commit created. */
export interface OrderChange {
  id: string;
  organizationId: string;
  walletId: string;
  side: OrderSide;
  status: OrderStatus;
  statusReason: string | null;
  remainingLots: string;
  filledLots: string;
  filledNotional: string;
  feesPaid: string;
  created: CreatedOrderRow | null;
}

/** A trade as committed (decimal strings), with the organisations of both orders. */
export interface CommittedTrade {
  id: string;
  sequence: string;
  makerOrderId: string;
  takerOrderId: string;
  makerWalletId: string;
  takerWalletId: string;
  makerOrganizationId: string;
  takerOrganizationId: string;
  takerSide: OrderSide;
  price: string;
  quantity: string;
  makerFee: string;
  takerFee: string;
  settlementStatus: SettlementStatus;
}

/**
 * What one committed group of commands changed in a market, for the realtime feeds: plain data
 * (it travels as JSON through Redis). `book` is present when price levels changed: the market's
 * book sequence after the commit (the value PostgreSQL now holds) and each changed level's state
 * after it (quantity "0": the level is gone).
 */
export interface CommittedChange {
  marketId: string;
  symbol: string;
  /** Milliseconds since the epoch, when the commit was written. */
  committedAt: number;
  book: { sequence: string; bids: BookLevel[]; asks: BookLevel[] } | null;
  trades: CommittedTrade[];
  orders: OrderChange[];
  /** Wallet balances the commit moved. */
  balances: { organizationId: string; walletId: string; assetId: string }[];
}

export type CommitListener = (change: CommittedChange) => void;

/** The price levels the events changed, as `SIDE:ticks`. */
export function touchedLevels(events: readonly EngineEvent[]): Set<string> {
  const levels = new Set<string>();
  for (const e of events) {
    if (e.type === 'rested') levels.add(`${e.side}:${e.price}`);
    else if (e.type === 'trade') levels.add(`${e.takerSide === 'BUY' ? 'SELL' : 'BUY'}:${e.price}`);
    else if (e.type === 'cancelled' && e.side !== undefined && e.price !== undefined) levels.add(`${e.side}:${e.price}`);
  }
  return levels;
}

/** What a commit's description reads of its market's runtime (market-runtime.ts's Runtime). */
export interface CommittedMarket {
  rules: TradingRules;
  engine: Pick<MatchingEngine, 'level'>;
  bookSequence: number;
}

/**
 * Describes a commit just written: levels read from the engine (which now holds the committed
 * state), trades and orders from the fill accounting. Call it before the market's next command.
 */
export function describeCommit(
  rt: CommittedMarket,
  levels: ReadonlySet<string>,
  accounted: FillAccounting,
  newRows: ReadonlyMap<string, Partial<OrderModel>>,
  committedAt: Date,
): CommittedChange {
  const { rules, engine } = rt;
  const bids: BookLevel[] = [];
  const asks: BookLevel[] = [];
  for (const key of levels) {
    const [side, ticks] = key.split(':');
    const price = Number(ticks);
    const l = engine.level(side as 'BUY' | 'SELL', price);
    (side === 'BUY' ? bids : asks).push({ price: formatMultiple(rules.tick, BigInt(price)), quantity: formatMultiple(rules.lot, BigInt(l.quantity)), orders: l.orders });
  }
  const byId = new Map(accounted.orders.map((w) => [w.id, w]));
  const orgOf = (id: string) => byId.get(id)?.organizationId ?? '';
  // Text, not Dates: JSON.stringify converts a Date on a slow path, for every order of every commit.
  const at = committedAt.toISOString();
  const created = (id: string): CreatedOrderRow | null => {
    const row = newRows.get(id);
    return row ? Object.assign({}, row, { createdAt: at, updatedAt: at }) : null;
  };
  return {
    marketId: rules.market.id,
    symbol: rules.market.symbol,
    committedAt: committedAt.getTime(),
    book: levels.size ? { sequence: String(rt.bookSequence), bids, asks } : null,
    trades: accounted.trades.map((t) => ({
      id: t.id,
      sequence: t.sequence,
      makerOrderId: t.makerOrderId,
      takerOrderId: t.takerOrderId,
      makerWalletId: t.makerWalletId,
      takerWalletId: t.takerWalletId,
      makerOrganizationId: orgOf(t.makerOrderId),
      takerOrganizationId: orgOf(t.takerOrderId),
      takerSide: t.takerSide as OrderSide,
      price: t.price,
      quantity: t.quantity,
      makerFee: t.makerFee,
      takerFee: t.takerFee,
      settlementStatus: t.settlementStatus as SettlementStatus,
    })),
    orders: accounted.orders.map((w) => ({
      id: w.id,
      organizationId: w.organizationId,
      walletId: w.walletId,
      side: w.side,
      status: w.status,
      statusReason: w.statusReason,
      remainingLots: String(w.remainingLots),
      filledLots: String(w.filledLots),
      filledNotional: String(w.filledNotional),
      feesPaid: String(w.feesPaid),
      created: created(w.id),
    })),
    balances: uniqueBalances(accounted),
  };
}

function uniqueBalances(accounted: FillAccounting): CommittedChange['balances'] {
  const seen = new Map<string, CommittedChange['balances'][number]>();
  for (const m of accounted.moves) {
    if (!m.organizationId || !m.walletId) continue;
    seen.set(`${m.walletId}:${m.assetId}`, { organizationId: m.organizationId, walletId: m.walletId, assetId: m.assetId });
  }
  return [...seen.values()];
}
