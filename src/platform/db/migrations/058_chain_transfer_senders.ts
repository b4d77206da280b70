import { Knex } from 'knex';

/**
 * A Solana transaction may move one asset out of several accounts, each signing: the deposit's
 * from_address is the one that lost the most, also_from the others. The sanctions screen checks
 * them all. Empty for what was recorded before, and on EVM (one sender).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE chain_transfers ADD COLUMN also_from text[] NOT NULL DEFAULT '{}'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE chain_transfers DROP COLUMN also_from');
}
