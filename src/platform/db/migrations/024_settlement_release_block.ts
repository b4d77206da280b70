import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The transaction that released a batch's proceeds and the block it was mined in: a reorg that
    -- takes that block away (the batch's own block staying) makes the release due again.
    ALTER TABLE settlement_batches
      ADD COLUMN release_tx_hash text,
      ADD COLUMN release_block_number bigint,
      ADD COLUMN release_block_hash text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE settlement_batches DROP COLUMN IF EXISTS release_tx_hash, DROP COLUMN IF EXISTS release_block_number, DROP COLUMN IF EXISTS release_block_hash;`);
}
