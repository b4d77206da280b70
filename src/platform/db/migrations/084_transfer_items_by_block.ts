import { Knex } from 'knex';

/**
 * The deposit watcher asks each step which of Keel's lines were mined in the blocks it is about to
 * scan (withdrawals' linesMovingOn): a line that became final before the watcher scanned its block
 * keeps the wallet it pays watched, deactivated or not, so what it brings is credited. An index of
 * the lines by block (a range of a few blocks), instead of a scan of every line.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX transfer_items_block_idx ON transfer_items (block_number) WHERE block_number IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX transfer_items_block_idx');
}
