import { Knex } from 'knex';
import { assetRows } from '../chains';
import { marketRows } from '../markets';
import { batchTradeRows, settlementTradeRows, unconfirmedTradeRows } from '../orders';
import { netTrades, NettableTrade } from './netting';

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
 * Per wallet and asset, the net of every trade not yet CONFIRMED on chain, in base units: what the
 * trading ledger already shows and the contract does not. Positive: proceeds still to arrive (not
 * withdrawable from trading yet); negative: what the wallet still owes its counterparties. Netted by the rule batches settle
 * by (netTrades), so the two cannot drift apart.
 */
export async function unsettledDeltas(db: Knex | Knex.Transaction, filter: DeltaFilter = {}): Promise<Map<string, bigint>> {
  return deltasOf(db, unconfirmedTradeRows(db, db('settlement_batches').whereNot('status', 'CONFIRMED').select('id')), filter);
}

/**
 * Per wallet and asset, what the trading ledger shows that may not leave trading: the net proceeds
 * of the trades still to settle, and apart from them those of the trades whose settlement failed
 * for good. A failed trade's proceeds never arrive, so they cannot make up for what the wallet's
 * later trades owe: netted together, a withdrawal would take funds those trades must pay out.
 */
export async function withheldProceeds(db: Knex | Knex.Transaction, filter: { walletId: string; assetId?: string }): Promise<Map<string, bigint>> {
  const pending = await deltasOf(db, unconfirmedTradeRows(db, db('settlement_batches').whereNotIn('status', ['CONFIRMED', 'FAILED']).select('id')), filter);
  const failed = await deltasOf(db, batchTradeRows(db, db('settlement_batches').where('status', 'FAILED').select('id')), filter);
  const withheld = new Map<string, bigint>();
  for (const deltas of [pending, failed]) for (const [key, amount] of deltas) if (amount > 0n) withheld.set(key, (withheld.get(key) ?? 0n) + amount);
  return withheld;
}

async function deltasOf(db: Knex | Knex.Transaction, tradeRows: Knex.QueryBuilder, filter: DeltaFilter): Promise<Map<string, bigint>> {
  const query = settlementTrades(db, tradeRows);
  // Batches known to be on chain already (mined, not yet CONFIRMED): their trades are settled for the caller.
  if (filter.settledBatchIds?.length) query.where((q) => q.whereNull('t.settlementBatchId').orWhereNotIn('t.settlementBatchId', filter.settledBatchIds!));
  if (filter.walletId) query.where((q) => q.where('t.makerWalletId', filter.walletId!).orWhere('t.takerWalletId', filter.walletId!));
  if (filter.assetId) query.where((q) => q.where('b.id', filter.assetId!).orWhere('q.id', filter.assetId!));
  if (filter.blockchainId) query.where('b.blockchainId', filter.blockchainId);
  const deltas = netTrades((await query).map(toSettlementTrade));
  const wanted = deltas.filter((d) => (!filter.walletId || d.walletId === filter.walletId) && (!filter.assetId || d.assetId === filter.assetId));
  return new Map(wanted.map((d) => [`${d.walletId}|${d.assetId}`, d.amount]));
}
