import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The settlement batcher takes the oldest QUEUED trades in settlement_key order, a batch at a
    -- time. Indexed in that order, it reads the trades it takes however long the queue has grown,
    -- instead of fetching and sorting the whole queue at every step; the index it replaces (on the
    -- status alone, for the same rows) served nothing else.
    CREATE INDEX trades_queued_settlement_key_idx ON trades (settlement_key) WHERE settlement_status = 'QUEUED';
    DROP INDEX IF EXISTS trades_settlement_idx;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX IF NOT EXISTS trades_settlement_idx ON trades (settlement_status) WHERE settlement_status = 'QUEUED';
    DROP INDEX IF EXISTS trades_queued_settlement_key_idx;
  `);
}
