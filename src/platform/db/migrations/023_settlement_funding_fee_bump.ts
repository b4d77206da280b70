import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A funding transaction stuck below the market fee is signed again with the same nonce and a
    -- higher fee: the row follows the newest signing (tx_hash, raw_tx, sent_at), and keeps the hashes
    -- it replaced, any of which may be the one that is mined.
    ALTER TABLE settlement_funding_txs
      ADD COLUMN replaced_tx_hashes text[] NOT NULL DEFAULT '{}',
      ADD COLUMN sent_at timestamptz;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE settlement_funding_txs DROP COLUMN IF EXISTS replaced_tx_hashes, DROP COLUMN IF EXISTS sent_at;`);
}
