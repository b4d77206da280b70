import { Knex } from 'knex';

/**
 * Which of a batch of deposits' transaction hashes Keel itself sent (its gas top-ups, its swaps) is
 * asked of every deposit batch, and a line's earlier fee-bumped transactions count as its own: an
 * index of the replaced hashes, kept only for the few lines that have any.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX transfer_items_replaced_tx_hashes_idx ON transfer_items USING gin (replaced_tx_hashes) WHERE replaced_tx_hashes <> '{}'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX transfer_items_replaced_tx_hashes_idx');
}
