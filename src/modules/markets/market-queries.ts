import type { Knex } from 'knex';

/*
 * The markets table as a subquery for another module's one-round-trip query (it joins or filters
 * on it in the same statement): only the columns named here, the markets table being this module's.
 */

/** The ids of the markets whose base asset is one of these (a subquery of asset ids). */
export function marketIdsWithBaseIn(db: Knex | Knex.Transaction, baseAssetIds: Knex.QueryBuilder): Knex.QueryBuilder {
  return db('markets').whereIn('baseAssetId', baseAssetIds).select('id');
}

/** Each market's id, symbol, and base and quote assets. */
export function marketRows(db: Knex | Knex.Transaction): Knex.QueryBuilder {
  return db('markets').select('id', 'symbol', 'baseAssetId', 'quoteAssetId');
}
