import { Knex } from 'knex';

/**
 * What each order's commit writes beyond its rows (issue 37): the journal's two secondary indexes,
 * which no query reads (a wallet's history and the invariant are read from ledger_balances, or by
 * a full scan), and the foreign keys whose targets the order book takes from the market it has
 * loaded (its id and its two assets, never deleted): each was one index insert or one trigger
 * query per journal entry or order, together about a third of PostgreSQL's CPU per order.
 * The organisation keys stay (an organisation's deletion cascades through them).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX ledger_entries_wallet_idx;
    DROP INDEX ledger_entries_asset_kind_idx;
    ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_asset_id_fkey;
    ALTER TABLE orders DROP CONSTRAINT orders_market_id_fkey, DROP CONSTRAINT orders_lock_asset_id_fkey;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE orders ADD CONSTRAINT orders_market_id_fkey FOREIGN KEY (market_id) REFERENCES markets(id),
                       ADD CONSTRAINT orders_lock_asset_id_fkey FOREIGN KEY (lock_asset_id) REFERENCES assets(id);
    ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_asset_id_fkey FOREIGN KEY (asset_id) REFERENCES assets(id);
    CREATE INDEX ledger_entries_asset_kind_idx ON ledger_entries (asset_id, kind);
    CREATE INDEX ledger_entries_wallet_idx ON ledger_entries (wallet_id, asset_id, id);
  `);
}
