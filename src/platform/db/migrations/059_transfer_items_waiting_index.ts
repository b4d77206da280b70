import { Knex } from 'knex';

/**
 * The lines that wait on another line (a sweep on its gas top-up: after_item_id) are looked up by
 * that line whenever a transfer is rejected (its group locked, the transfers waiting on it rejected
 * too): an index of the few lines that wait, instead of a scan of every line.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX transfer_items_after_item_idx ON transfer_items (after_item_id) WHERE after_item_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX transfer_items_after_item_idx');
}
