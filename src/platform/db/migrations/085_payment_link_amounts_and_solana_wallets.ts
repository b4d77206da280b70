import { Knex } from 'knex';

/**
 * A payment link's amount is held exactly as asked: a decimal as the API takes it, up to 60 whole
 * and 36 fraction digits (an allowed asset has up to 36 decimals). The column held 18 fraction
 * digits: a finer amount was rounded (one unit of a 24-decimal token to 0, which the check refused).
 *
 * The links settling into a Solana wallet are found by an index, as those of an EVM wallet are: a
 * master wallet's paymentLinksCount counts both.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payment_links ALTER COLUMN amount TYPE numeric(96, 36);
    CREATE INDEX payment_links_solana_wallet_idx ON payment_links (solana_settlement_wallet_id) WHERE deleted_at IS NULL AND solana_settlement_wallet_id IS NOT NULL;
  `);
}

/** Back to 18 decimals: an amount finer than that is rounded, and one that rounds to 0 stops the migration. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX payment_links_solana_wallet_idx;
    ALTER TABLE payment_links ALTER COLUMN amount TYPE numeric(78, 18);
  `);
}
