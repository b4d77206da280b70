import { Knex } from 'knex';

/**
 * Settlement moves each trade's settlement_status through BATCHED, SUBMITTED and CONFIRMED (and
 * REPLACED or REORGED on the way) after the order book wrote it (issue 37). With the status in two
 * partial indexes' predicates (the queue's, the unsettled trades'), PostgreSQL could not update it in
 * place: each change wrote the whole trade again with an entry in each of its indexes. Now no index
 * reads the status, so a status change is a heap-only update within the row's page; the queue is the
 * trades not in a batch yet (QUEUED is exactly that, which the CHECK keeps true), and the trades not
 * settled are found through their batches. Half of each page is left free (fillfactor 50): room for
 * a new version of each of its trades, the old ones pruned as the page is next read. At 80 about half
 * of the status changes found room, at 50 nearly all (`npm run bench -- trade-settlement-writes`);
 * the table takes twice the pages, its indexes no more.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE trades ADD CONSTRAINT trades_queued_until_batched CHECK ((settlement_status = 'QUEUED') = (settlement_batch_id IS NULL));
    CREATE INDEX trades_unbatched_settlement_key_idx ON trades (settlement_key) WHERE settlement_batch_id IS NULL;
    DROP INDEX trades_queued_settlement_key_idx;
    DROP INDEX trades_unsettled_idx;
    ALTER TABLE trades SET (fillfactor = 50);
    CREATE INDEX settlement_batches_unconfirmed_idx ON settlement_batches (id) WHERE status <> 'CONFIRMED';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX settlement_batches_unconfirmed_idx;
    ALTER TABLE trades RESET (fillfactor);
    CREATE INDEX trades_unsettled_idx ON trades (settlement_status) WHERE settlement_status <> 'CONFIRMED';
    CREATE INDEX trades_queued_settlement_key_idx ON trades (settlement_key) WHERE settlement_status = 'QUEUED';
    DROP INDEX trades_unbatched_settlement_key_idx;
    ALTER TABLE trades DROP CONSTRAINT trades_queued_until_batched;
  `);
}
