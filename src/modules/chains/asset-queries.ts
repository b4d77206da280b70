import type { Knex } from 'knex';

/*
 * The assets table as a subquery for another module's one-round-trip query (it joins or filters on
 * it in the same statement): only the columns named here, the assets table being this module's.
 */

/** The ids of a chain's assets. */
export function assetIdsOnChain(db: Knex | Knex.Transaction, blockchainId: string): Knex.QueryBuilder {
  return db('assets').where({ blockchainId }).select('id');
}

/** Each asset's id, chain, symbol and decimals. */
export function assetRows(db: Knex | Knex.Transaction): Knex.QueryBuilder {
  return db('assets').select('id', 'blockchainId', 'symbol', 'decimals');
}
