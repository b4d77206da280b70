import type { Knex } from 'knex';
import type { SettlementStatus } from './order.domain';

/*
 * The trades' settlement columns (settlement_key, settlement_status, settlement_batch_id,
 * settlement_retry_at), which the settlement module keeps, read and written in the caller's
 * transaction: the trades and orders tables are this module's.
 */

/** Each trade with what netting it on chain needs, as a subquery to join (with its market) in the caller's statement. */
export function settlementTradeRows(db: Knex | Knex.Transaction): Knex.QueryBuilder {
  return db('trades').select(SETTLEMENT_COLUMNS);
}

const SETTLEMENT_COLUMNS = ['id', 'marketId', 'settlementKey', 'settlementStatus', 'settlementBatchId', 'makerWalletId', 'takerWalletId', 'takerSide', 'quantity', 'quoteAmount', 'makerFee', 'takerFee'];

/**
 * The trades not CONFIRMED: those in no batch yet (QUEUED) and those of the given batches (a subquery
 * of the batches not CONFIRMED), as a subquery to join. No index reads the status, so that settlement's
 * status changes are updates in place (migration 050): the trades are found through their batches.
 */
export function unconfirmedTradeRows(db: Knex | Knex.Transaction, unconfirmedBatchIds: Knex.QueryBuilder): Knex.QueryBuilder {
  return settlementTradeRows(db)
    .whereNull('settlementBatchId')
    .unionAll((q) => q.select(SETTLEMENT_COLUMNS).from('trades').whereRaw('settlement_batch_id = ANY(ARRAY(?))', [unconfirmedBatchIds]));
}

/** The trades of the given batches (a subquery of batch ids), as a subquery to join. */
export function batchTradeRows(db: Knex | Knex.Transaction, batchIds: Knex.QueryBuilder): Knex.QueryBuilder {
  return settlementTradeRows(db).whereRaw('settlement_batch_id = ANY(ARRAY(?))', [batchIds]);
}

/**
 * Up to `limit` QUEUED trades (their retry time come) of these markets (a subquery of market ids), in
 * settlement_key order, locked (FOR UPDATE SKIP LOCKED) in the caller's transaction; or, given no
 * transaction, as they stand, unlocked (a look before taking them).
 */
export async function queuedTrades(db: Knex | Knex.Transaction, marketIds: Knex.QueryBuilder, limit: number): Promise<{ id: string; createdAt: Date }[]> {
  const { rows } = await db.raw(
    // The markets as an array, not a join: PostgreSQL then walks the queue in settlement_key order
    // (migration 050: QUEUED is not in a batch yet) and stops at the limit.
    `SELECT t.id, t.created_at AS "createdAt"
       FROM trades t
      WHERE t.settlement_batch_id IS NULL AND (t.settlement_retry_at IS NULL OR t.settlement_retry_at <= now())
        AND t.market_id = ANY(ARRAY(?))
      ORDER BY t.settlement_key LIMIT ?${db.isTransaction ? ' FOR UPDATE SKIP LOCKED' : ''}`,
    [marketIds, limit],
  );
  return rows;
}

/** The ids of a batch's trades in settlement_key order, locked. */
export async function batchTradeIds(trx: Knex.Transaction, batchId: string): Promise<string[]> {
  const trades: { id: string }[] = await trx('trades').where({ settlementBatchId: batchId }).orderBy('settlementKey').select('id').forUpdate();
  return trades.map((t) => t.id);
}

/** What a batch records of its trades: the markets they were made in, the organisations whose orders made them, and the first of their settlement keys. */
export async function batchFactsOf(trx: Knex.Transaction, tradeIds: string[]): Promise<{ markets: string[]; orgs: string[]; firstKey: string }> {
  const { rows } = await trx.raw(
    `SELECT array_agg(DISTINCT t.market_id) AS markets, array_agg(DISTINCT o.organization_id) AS orgs, min(t.settlement_key)::text AS "firstKey"
       FROM trades t JOIN orders o ON o.id IN (t.maker_order_id, t.taker_order_id) WHERE t.id = ANY(?::uuid[])`,
    [tradeIds],
  );
  return rows[0];
}

/** Whether any trade is in the batch now (a batch that failed and was split holds none: its parts do). */
export async function batchHoldsTrades(db: Knex | Knex.Transaction, batchId: string): Promise<boolean> {
  return (await db('trades').where({ settlementBatchId: batchId }).first('id')) !== undefined;
}

/** Puts these trades in a batch (BATCHED). */
export async function batchTrades(trx: Knex.Transaction, tradeIds: string[], batchId: string): Promise<void> {
  await trx('trades').whereIn('id', tradeIds).update({ settlementBatchId: batchId, settlementStatus: 'BATCHED' });
}

/** Gives a batch's trades the batch's new status. */
export async function setBatchTradesStatus(trx: Knex.Transaction, batchId: string, status: SettlementStatus): Promise<void> {
  await trx('trades').where({ settlementBatchId: batchId }).update({ settlementStatus: status });
}
