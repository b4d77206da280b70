import { Knex } from 'knex';

/**
 * The slot of a Solana line's blockhash (its transaction can land only after it): a transaction not
 * found once its blockhash expired is replaced only if the node's status cache or transaction
 * history still reaches that slot. Null on EVM lines and on lines recorded before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE transfer_items ADD COLUMN valid_from bigint');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE transfer_items DROP COLUMN valid_from');
}
