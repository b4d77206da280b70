import type { Knex } from 'knex';

/* Balances and debts as other modules read them, in the caller's transaction: the ledger_balances and wallet_debts tables are this module's. */

/** Per asset, what every wallet's balances hold of it (available + locked, in base units, as text); assets whose total is zero are absent. */
export async function assetTotals(db: Knex | Knex.Transaction, assetIds: string[]): Promise<Record<string, string>> {
  if (assetIds.length === 0) return {};
  const rows: { assetId: string; total: string }[] = await db('ledger_balances')
    .whereIn('assetId', assetIds)
    .groupBy('assetId')
    .select('assetId', db.raw('sum(available + locked)::text AS total'))
    .havingRaw('sum(available + locked) <> 0');
  return Object.fromEntries(rows.map((r) => [r.assetId, r.total]));
}

/** Each wallet's balance of these assets (available + locked, in base units, as text), on one account or on every one, of one organisation or of all. */
export function balanceTotals(db: Knex | Knex.Transaction, assetIds: string[], filter: { account?: 'custody' | 'trading'; organizationId?: string } = {}): Promise<{ walletId: string; assetId: string; account: 'custody' | 'trading'; total: string }[]> {
  const q = db('ledger_balances').whereIn('assetId', assetIds).select('walletId', 'assetId', 'account', db.raw('(available + locked)::text AS total'));
  if (filter.account) q.where({ account: filter.account });
  if (filter.organizationId) q.where({ organizationId: filter.organizationId });
  return q;
}

/** What each wallet owes of these assets per ledger account (in base units, as text), of one organisation or of all. */
export function walletDebtsOf(db: Knex | Knex.Transaction, assetIds: string[], organizationId?: string): Promise<{ walletId: string; assetId: string; account: 'custody' | 'trading'; amount: string }[]> {
  const q = db('wallet_debts').whereIn('assetId', assetIds).select('walletId', 'assetId', 'account', db.raw('amount::text AS amount'));
  if (organizationId) q.where({ organizationId });
  return q;
}
