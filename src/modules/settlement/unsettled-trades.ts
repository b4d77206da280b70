import { Knex } from 'knex';
import { assetRows } from '../chains';
import { marketRows } from '../markets';
import { settlementTradeRows, unconfirmedTradeRows } from '../orders';
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

/**
 * Per wallet and asset, the net of every trade not yet CONFIRMED on chain, in base units: what the
 * trading ledger already shows and the contract does not. Positive: proceeds still to arrive (not
 * withdrawable from trading yet); negative: what the wallet still owes its counterparties. Netted by the rule batches settle
 * by (netTrades), so the two cannot drift apart.
 */
export async function unsettledDeltas(db: Knex | Knex.Transaction, filter: { walletId?: string; assetId?: string; blockchainId?: string; settledBatchIds?: string[] } = {}): Promise<Map<string, bigint>> {
  const query = settlementTrades(db, unconfirmedTradeRows(db, db('settlement_batches').whereNot('status', 'CONFIRMED').select('id')));
  // Batches known to be on chain already (mined, not yet CONFIRMED): their trades are settled for the caller.
  if (filter.settledBatchIds?.length) query.where((q) => q.whereNull('t.settlementBatchId').orWhereNotIn('t.settlementBatchId', filter.settledBatchIds!));
  if (filter.walletId) query.where((q) => q.where('t.makerWalletId', filter.walletId!).orWhere('t.takerWalletId', filter.walletId!));
  if (filter.assetId) query.where((q) => q.where('b.id', filter.assetId!).orWhere('q.id', filter.assetId!));
  if (filter.blockchainId) query.where('b.blockchainId', filter.blockchainId);
  const deltas = netTrades((await query).map(toSettlementTrade));
  const wanted = deltas.filter((d) => (!filter.walletId || d.walletId === filter.walletId) && (!filter.assetId || d.assetId === filter.assetId));
  return new Map(wanted.map((d) => [`${d.walletId}|${d.assetId}`, d.amount]));
}
