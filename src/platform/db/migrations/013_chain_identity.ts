import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The hash of the chain's block 0 as Keel first saw it: another genesis behind the same chain id
    -- (a dev chain started afresh) is a reset, not a reorg of every block.
    ALTER TABLE blockchains ADD COLUMN genesis_hash text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE blockchains DROP COLUMN genesis_hash');
}
