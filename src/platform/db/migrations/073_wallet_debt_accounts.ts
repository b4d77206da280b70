import { Knex } from 'knex';

/**
 * A debt belongs to the ledger account whose credit a reorg took back: custody (a deposit at the
 * wallet's address, a payout from trading to it) or trading (the refund of a payout that reverted
 * on chain). Reconciliation subtracts it from that account and only that account's credits repay
 * it. Debts recorded before were all counted against custody: they stay custody's.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE wallet_debts ADD COLUMN account text NOT NULL DEFAULT 'custody' CHECK (account IN ('custody', 'trading'));
    ALTER TABLE wallet_debts DROP CONSTRAINT wallet_debts_pkey, ADD PRIMARY KEY (wallet_id, asset_id, account);
  `);
}

export async function down(knex: Knex): Promise<void> {
  // One row per wallet and asset again: a trading debt joins the custody one, as it was counted before.
  await knex.raw(`
    INSERT INTO wallet_debts (wallet_id, asset_id, organization_id, amount, account)
    SELECT wallet_id, asset_id, organization_id, amount, 'custody' FROM wallet_debts WHERE account = 'trading'
    ON CONFLICT (wallet_id, asset_id, account) DO UPDATE SET amount = wallet_debts.amount + excluded.amount;
    DELETE FROM wallet_debts WHERE account = 'trading';
    ALTER TABLE wallet_debts DROP CONSTRAINT wallet_debts_pkey, ADD PRIMARY KEY (wallet_id, asset_id);
    ALTER TABLE wallet_debts DROP COLUMN account;
  `);
}
