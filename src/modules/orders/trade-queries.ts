import type { Knex } from 'knex';

/*
 * The trades table as a subquery for another module's one-round-trip query (it joins or filters on
 * it in the same statement): only the columns named here, the trades and orders tables being this module's.
 */

/** Each trade's market, price, quantity, sequence and time; `withOrganizations`: also the organisations of its maker's and taker's orders (makerOrganizationId, takerOrganizationId). */
export function tradeRows(db: Knex | Knex.Transaction, withOrganizations = false): Knex.QueryBuilder {
  const q = db('trades as t').select('t.marketId', 't.price', 't.quantity', 't.sequence', 't.createdAt');
  if (!withOrganizations) return q;
  return q
    .join('orders as mo', 'mo.id', 't.makerOrderId')
    .join('orders as tko', 'tko.id', 't.takerOrderId')
    .select('mo.organizationId as makerOrganizationId', 'tko.organizationId as takerOrganizationId');
}
