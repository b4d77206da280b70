import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A deposit to trading may carry the chain's coin with a token in one transaction (coinAmount):
    -- two trading transfers (the token's and the coin's) on one transfer line, one per asset.
    DROP INDEX IF EXISTS trading_transfers_item_idx;
    CREATE UNIQUE INDEX trading_transfers_item_idx ON trading_transfers (deposit_item_id, asset_id) WHERE deposit_item_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS trading_transfers_item_idx;
    CREATE UNIQUE INDEX trading_transfers_item_idx ON trading_transfers (deposit_item_id) WHERE deposit_item_id IS NOT NULL;
  `);
}
