import { Knex } from 'knex';

/**
 * A payout of withdrawals from trading stuck below the market fee is signed again at its nonce with
 * a higher fee, as a settlement batch is: every hash signed before at that nonce is kept
 * (replaced_tx_hashes, oldest first), since any of them may be the one mined.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE trading_transfers ADD COLUMN replaced_tx_hashes text[] NOT NULL DEFAULT '{}'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE trading_transfers DROP COLUMN replaced_tx_hashes`);
}
