import { Knex } from 'knex';

/**
 * The checkout watcher goes through each chain's checkouts awaiting payment oldest first, a batch
 * per pass from where the last stopped (checkout-watcher.ts, detectOn): read through this index
 * rather than every open checkout of the deployment filtered and sorted on each pass.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX checkouts_awaiting_idx ON checkouts (blockchain_id, created_at, id) WHERE status = 'AWAITING_PAYMENT'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX checkouts_awaiting_idx');
}
