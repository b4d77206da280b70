import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A CONFIRMED deposit to trading whose transaction a reorg deeper than the confirmation count
    -- took off the chain: when the watch found it gone (cleared when it is mined again).
    ALTER TABLE trading_transfers ADD COLUMN reorged_at timestamptz;
    -- The watch reads a chain's confirmed deposits by block, within the reorg window.
    CREATE INDEX trading_transfers_confirmed_deposits_idx ON trading_transfers (blockchain_id, block_number) WHERE direction = 'DEPOSIT' AND status = 'CONFIRMED';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS trading_transfers_confirmed_deposits_idx;
    ALTER TABLE trading_transfers DROP COLUMN IF EXISTS reorged_at;
  `);
}
