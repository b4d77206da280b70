import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- An NFT transfer's token id (ERC-721, ERC-1155); null for native coin and ERC-20 transfers.
    ALTER TABLE chain_transfers ADD COLUMN token_id numeric(78, 0) CHECK (token_id >= 0);
    -- An ERC-1155 TransferBatch log moves several ids: one record per id, at its position in the
    -- batch (0 for every other transfer), so the event key stays unique and a rescan adds nothing.
    ALTER TABLE chain_transfers ADD COLUMN batch_index integer NOT NULL DEFAULT 0 CHECK (batch_index >= 0);
    ALTER TABLE chain_transfers DROP CONSTRAINT chain_transfers_event_key;
    ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_event_key UNIQUE (blockchain_id, tx_hash, log_index, batch_index, direction);

    -- The NFT a transfer line sends (safeTransferFrom); null for a fungible line.
    ALTER TABLE transfer_items ADD COLUMN token_id numeric(78, 0) CHECK (token_id >= 0);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE transfer_items DROP COLUMN token_id;
    DELETE FROM chain_transfers WHERE batch_index > 0;
    ALTER TABLE chain_transfers DROP CONSTRAINT chain_transfers_event_key;
    ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_event_key UNIQUE (blockchain_id, tx_hash, log_index, direction);
    ALTER TABLE chain_transfers DROP COLUMN batch_index;
    ALTER TABLE chain_transfers DROP COLUMN token_id;
  `);
}
