import { Knex } from 'knex';

/**
 * Solana withdrawals (issue 35): a transfer line records its signed transaction before it is
 * broadcast (raw_tx, tx_hash: the signature) with the block height past which it can no longer land
 * (valid_through, the blockhash's lastValidBlockHeight), and what it costs the sender beyond the
 * amount: the network fee and the rent of a recipient's token account it creates.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE transfer_items
      ADD COLUMN valid_through bigint,
      ADD COLUMN network_fee numeric(78, 0),
      ADD COLUMN account_creation_fee numeric(78, 0);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE transfer_items DROP COLUMN valid_through, DROP COLUMN network_fee, DROP COLUMN account_creation_fee;`);
}
