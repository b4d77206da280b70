import { Knex } from 'knex';
import { assetRows } from '../chains';
import { marketRows } from '../markets';
import { batchTradeRows, settlementTradeRows, unconfirmedTradeRows } from '../orders';
import { heldBack, NettableTrade, RunningDelta, runningDeltas } from './netting';

/** A trade row as netting reads it, with its settlement key (the order trades settle in). */
export interface SettlementTrade extends NettableTrade {
  settlementKey: string;
}

/** Trades (all, or the given trade rows) with what netting needs of their market's assets; the caller adds the where. */
export function settlementTrades(db: Knex | Knex.Transaction, tradeRows: Knex.QueryBuilder = settlementTradeRows(db)): Knex.QueryBuilder {
  // One statement over the owners' rows: trades (orders), markets, assets (chains).
  return db
    .from(tradeRows.as('t'))
    .join(marketRows(db).as('m'), 'm.id', 't.marketId')
    .join(assetRows(db).as('b'), 'b.id', 'm.baseAssetId')
    .join(assetRows(db).as('q'), 'q.id', 'm.quoteAssetId')
    .orderBy('t.settlementKey')
    .select('t.id', 't.settlementKey', 't.makerWalletId', 't.takerWalletId', 't.takerSide', 't.quantity', 't.quoteAmount', 't.makerFee', 't.takerFee', 'b.id as baseId', 'b.decimals as baseDecimals', 'q.id as quoteId', 'q.decimals as quoteDecimals');
}

export function toSettlementTrade(r: Record<string, any>): SettlementTrade {
  const { baseId, baseDecimals, quoteId, quoteDecimals, ...trade } = r;
  return { ...(trade as SettlementTrade), settlementKey: String(r.settlementKey), base: { id: baseId, decimals: baseDecimals }, quote: { id: quoteId, decimals: quoteDecimals } };
}

type DeltaFilter = { walletId?: string; assetId?: string; blockchainId?: string; settledBatchIds?: string[] };

/**
 * Per wallet and asset, the trades not yet CONFIRMED on chain, walked in settlement_key order (the
 * order batches settle in), in base units: `net` is what the trading ledger already shows and the
 * contract does not (positive: proceeds still to arrive; negative: what the wallet still owes its
 * counterparties), `lowest` the worst point on the way (runningDeltas). Netted by the rule batches
 * settle by (netTrades), so the two cannot drift apart.
 */
export async function unsettledDeltas(db: Knex | Knex.Transaction, filter: DeltaFilter = {}): Promise<Map<string, RunningDelta>> {
  return deltasOf(db, unconfirmedTradeRows(db, db('settlement_batches').whereNot('status', 'CONFIRMED').select('id')), filter);
}

/**
 * unsettledDeltas of the trades still to settle: not CONFIRMED and not FAILED for good. A failed
 * trade moved the ledger and will never move the contract: it is no longer on its way.
 */
export async function deltasToSettle(db: Knex | Knex.Transaction, filter: DeltaFilter = {}): Promise<Map<string, RunningDelta>> {
  return deltasOf(db, unconfirmedTradeRows(db, db('settlement_batches').whereNotIn('status', ['CONFIRMED', 'FAILED']).select('id')), filter);
}

/**
 * Per wallet and asset, what the trading ledger shows that may not leave trading: what the trades
 * still to settle need the contract to keep at their worst point (heldBack: a sale bought back
 * later still takes the asset out first), and apart from them the net proceeds of the trades whose
 * settlement failed for good. A failed trade's proceeds never arrive, so they cannot make up for
 * what the wallet's later trades owe: netted together, a withdrawal would take funds those trades
 * must pay out.
 */
export async function withheldProceeds(db: Knex | Knex.Transaction, filter: { walletId: string; assetId?: string }): Promise<Map<string, bigint>> {
  const pending = await deltasToSettle(db, filter);
  const failed = await deltasOf(db, batchTradeRows(db, db('settlement_batches').where('status', 'FAILED').select('id')), filter);
  const withheld = new Map<string, bigint>();
  const add = (key: string, amount: bigint) => amount > 0n && withheld.set(key, (withheld.get(key) ?? 0n) + amount);
  for (const [key, w] of pending) add(key, heldBack(w));
  for (const [key, w] of failed) add(key, w.net);
  return withheld;
}

async function deltasOf(db: Knex | Knex.Transaction, tradeRows: Knex.QueryBuilder, filter: DeltaFilter): Promise<Map<string, RunningDelta>> {
  const query = settlementTrades(db, tradeRows);
  // Batches known to be on chain already (mined, not yet CONFIRMED): their trades are settled for the caller.
  if (filter.settledBatchIds?.length) query.where((q) => q.whereNull('t.settlementBatchId').orWhereNotIn('t.settlementBatchId', filter.settledBatchIds!));
  if (filter.walletId) query.where((q) => q.where('t.makerWalletId', filter.walletId!).orWhere('t.takerWalletId', filter.walletId!));
  if (filter.assetId) query.where((q) => q.where('b.id', filter.assetId!).orWhere('q.id', filter.assetId!));
  if (filter.blockchainId) query.where('b.blockchainId', filter.blockchainId);
  // settlementTrades orders by settlement_key: the walk goes the way batches settle.
  const walks = runningDeltas((await query).map(toSettlementTrade));
  for (const [key, w] of walks) if ((filter.walletId && w.walletId !== filter.walletId) || (filter.assetId && w.assetId !== filter.assetId)) walks.delete(key);
  return walks;
}
