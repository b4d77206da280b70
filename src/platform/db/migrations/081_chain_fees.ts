import { Knex } from 'knex';

/**
 * The fees the deposit watcher saw a watched address pay for a transaction it sent (EVM: gas used ×
 * effective gas price, with a rollup's L1 data fee), reverted transactions too: one row per (chain,
 * transaction), once final. The custody ledger debits each fee of a transaction Keel did not send
 * itself (one sent by someone else with the key, or a transaction signed through Keel and broadcast
 * by its caller); a reorg or chain reset that drops the transaction marks the row REVERTED and the
 * fee is given back, and a fork that mines it again confirms the row again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE chain_fees (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      tx_hash text NOT NULL,
      CONSTRAINT chain_fees_tx_key UNIQUE (blockchain_id, tx_hash),
      -- The wallet that paid (the ledger's account: the deposit address, else the master wallet).
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      address_id uuid REFERENCES addresses(id) ON DELETE CASCADE,
      from_address text NOT NULL,
      -- What it paid, in the native coin's base units, and the block it was mined in.
      fee numeric(78, 0) NOT NULL,
      block_number bigint NOT NULL,
      block_hash text NOT NULL,
      -- REVERTED: a reorg or a chain reset dropped the transaction and the fee was given back.
      status text NOT NULL DEFAULT 'CONFIRMED' CHECK (status IN ('CONFIRMED', 'REVERTED')),
      reverted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX chain_fees_block_idx ON chain_fees (blockchain_id, block_number) WHERE status = 'CONFIRMED';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS chain_fees`);
}
