import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A transfer between two wallets Keel holds is one chain event seen from both ends: the sender's
    -- outgoing record and the receiver's incoming record share (chain, tx hash, log index).
    ALTER TABLE chain_transfers DROP CONSTRAINT chain_transfers_blockchain_id_tx_hash_log_index_key;
    ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_event_key UNIQUE (blockchain_id, tx_hash, log_index, direction);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE chain_transfers DROP CONSTRAINT chain_transfers_event_key;
    ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_blockchain_id_tx_hash_log_index_key UNIQUE (blockchain_id, tx_hash, log_index);
  `);
}
