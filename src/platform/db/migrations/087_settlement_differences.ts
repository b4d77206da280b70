import { Knex } from 'knex';

/**
 * What the worker's reconciliation found and told, shared by every worker and kept across restarts:
 * a row per chain, wallet, asset and account whose balance differs from the ledger, with the
 * difference, when a run first found it (reset when it changes) and when it was told to the wallet's
 * organisation (`trading_balance.difference`; null until it lasted). A run removes the rows it no
 * longer finds, so a difference that comes back is told again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE settlement_differences (
      blockchain_id uuid NOT NULL REFERENCES blockchains(id) ON DELETE CASCADE,
      wallet_id uuid NOT NULL,
      asset_id uuid NOT NULL,
      account text NOT NULL CHECK (account IN ('custody', 'trading')),
      difference numeric(78, 0) NOT NULL,
      first_seen_at timestamptz NOT NULL DEFAULT now(),
      told_at timestamptz,
      PRIMARY KEY (blockchain_id, wallet_id, asset_id, account)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE settlement_differences');
}
