import { Knex } from 'knex';

/**
 * A withdrawal from trading whose payout went out with others in one operator transaction that
 * reverted on chain (a recipient that took the coin when the transaction was estimated and refused
 * it when it was mined): nothing was paid (the contract's bitmap of paid keys reverted with it), so
 * it is PENDING again, to be sent on its own (send_alone); only its own transaction reverting
 * fails it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE trading_transfers ADD COLUMN send_alone boolean NOT NULL DEFAULT false`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE trading_transfers DROP COLUMN send_alone`);
}
