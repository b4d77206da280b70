import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A wallet's money in the ledger sits in one of two accounts per asset: 'custody', at the
    -- wallet's own address (deposits credit it, transfers out take from it), and 'trading', in the
    -- settlement contract (orders lock it, trades move it, the contract settles it). Rows written
    -- before this migration were the order book's balances: they are 'trading'
    -- (\`keel settlement migrate\` moves their funds into the contract, see README).
    ALTER TABLE ledger_balances ADD COLUMN account text NOT NULL DEFAULT 'trading' CHECK (account IN ('custody', 'trading'));
    ALTER TABLE ledger_balances DROP CONSTRAINT ledger_balances_pkey;
    ALTER TABLE ledger_balances ADD PRIMARY KEY (wallet_id, asset_id, account);
    ALTER TABLE ledger_entries ADD COLUMN account text NOT NULL DEFAULT 'trading' CHECK (account IN ('custody', 'trading'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Custody and trading rows of one wallet and asset become one row again.
    UPDATE ledger_balances b SET available = b.available + c.available, locked = b.locked + c.locked
      FROM ledger_balances c WHERE b.account = 'trading' AND c.account = 'custody' AND c.wallet_id = b.wallet_id AND c.asset_id = b.asset_id;
    DELETE FROM ledger_balances c WHERE c.account = 'custody' AND EXISTS (SELECT 1 FROM ledger_balances b WHERE b.account = 'trading' AND b.wallet_id = c.wallet_id AND b.asset_id = c.asset_id);
    ALTER TABLE ledger_balances DROP CONSTRAINT ledger_balances_pkey;
    ALTER TABLE ledger_balances DROP COLUMN account;
    ALTER TABLE ledger_balances ADD PRIMARY KEY (wallet_id, asset_id);
    ALTER TABLE ledger_entries DROP COLUMN account;
  `);
}
