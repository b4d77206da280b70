import { Knex } from 'knex';

/**
 * Per wallet and asset, the net of every trade not yet CONFIRMED on chain, in base units: what the
 * ledger already shows and the chain does not. Positive: proceeds still to arrive (not withdrawable
 * yet); negative: what the wallet still owes its counterparties.
 */
export async function unsettledDeltas(db: Knex | Knex.Transaction, filter: { walletId?: string; assetId?: string; blockchainId?: string } = {}): Promise<Map<string, bigint>> {
  const bindings: unknown[] = [];
  const where: string[] = [];
  if (filter.walletId) (where.push('d.wallet_id = ?'), bindings.push(filter.walletId));
  if (filter.assetId) (where.push('d.asset_id = ?'), bindings.push(filter.assetId));
  if (filter.blockchainId) (where.push('d.blockchain_id = ?'), bindings.push(filter.blockchainId));
  const walletFilter = filter.walletId ? 'AND (t.maker_wallet_id = ? OR t.taker_wallet_id = ?)' : '';
  const inner = filter.walletId ? [filter.walletId, filter.walletId] : [];
  const { rows } = await db.raw(
    `WITH t AS (
       SELECT t.*, m.base_asset_id, m.quote_asset_id, b.decimals AS bd, q.decimals AS qd, b.blockchain_id,
              CASE WHEN t.taker_side = 'BUY' THEN t.taker_wallet_id ELSE t.maker_wallet_id END AS buyer,
              CASE WHEN t.taker_side = 'BUY' THEN t.maker_wallet_id ELSE t.taker_wallet_id END AS seller,
              CASE WHEN t.taker_side = 'BUY' THEN t.taker_fee ELSE t.maker_fee END AS buyer_fee,
              CASE WHEN t.taker_side = 'BUY' THEN t.maker_fee ELSE t.taker_fee END AS seller_fee
         FROM trades t JOIN markets m ON m.id = t.market_id JOIN assets b ON b.id = m.base_asset_id JOIN assets q ON q.id = m.quote_asset_id
        WHERE t.settlement_status <> 'CONFIRMED' ${walletFilter}
     ), d AS (
       SELECT buyer AS wallet_id, base_asset_id AS asset_id, blockchain_id, quantity * power(10::numeric, bd) AS amount FROM t
       UNION ALL SELECT buyer, quote_asset_id, blockchain_id, -(quote_amount + buyer_fee) * power(10::numeric, qd) FROM t
       UNION ALL SELECT seller, base_asset_id, blockchain_id, -quantity * power(10::numeric, bd) FROM t
       UNION ALL SELECT seller, quote_asset_id, blockchain_id, (quote_amount - seller_fee) * power(10::numeric, qd) FROM t
     )
     SELECT d.wallet_id AS "walletId", d.asset_id AS "assetId", trunc(sum(d.amount))::text AS amount
       FROM d ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      GROUP BY d.wallet_id, d.asset_id`,
    [...inner, ...bindings] as Knex.RawBinding[],
  );
  return new Map((rows as { walletId: string; assetId: string; amount: string }[]).map((r) => [`${r.walletId}|${r.assetId}`, BigInt(r.amount)]));
}
