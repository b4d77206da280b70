import { Knex } from 'knex';

/**
 * An administrator may ask for a transfer still being sent to be cancelled (withdrawals/
 * transfer-cancellations.ts): when it was asked, and for each line the zero-value transactions to
 * itself the sender signed at the line's nonce to take its place. If one of them is mined, the line
 * failed (refunded, its gas charged); if the line's own transaction is mined first, it stands.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE transfers ADD COLUMN cancel_requested_at timestamptz;
    ALTER TABLE transfer_items ADD COLUMN cancel_tx_hashes text[] NOT NULL DEFAULT '{}';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE transfer_items DROP COLUMN cancel_tx_hashes;
    ALTER TABLE transfers DROP COLUMN cancel_requested_at;
  `);
}
