import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A checkout paid on Solana (issue 35) carries its Solana Pay request: the fresh reference key
    -- recorded for it, and the label and message its payer's wallet shows. Null on EVM.
    ALTER TABLE checkouts ADD COLUMN solana_pay jsonb;
    -- A payment link's Solana settlement wallet is a master wallet, as its EVM one is.
    ALTER TABLE payment_links ALTER COLUMN solana_settlement_wallet_id TYPE uuid USING solana_settlement_wallet_id::uuid;
    ALTER TABLE payment_links ADD CONSTRAINT payment_links_solana_settlement_wallet_fkey FOREIGN KEY (solana_settlement_wallet_id) REFERENCES master_wallets(id) ON DELETE CASCADE;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payment_links DROP CONSTRAINT payment_links_solana_settlement_wallet_fkey;
    ALTER TABLE payment_links ALTER COLUMN solana_settlement_wallet_id TYPE text;
    ALTER TABLE checkouts DROP COLUMN solana_pay;
  `);
}
