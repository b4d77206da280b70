import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The settlement contract Keel settles trades through, one per chain.
    CREATE TABLE settlement_contracts (
      blockchain_id uuid PRIMARY KEY REFERENCES blockchains(id) ON DELETE CASCADE,
      address text NOT NULL,
      operator_address text NOT NULL,
      fee_recipient text NOT NULL,
      deployed_tx_hash text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    -- One batch is one settlement transaction's worth of trades on one chain (fee bumps and
    -- re-submissions after a reorg keep the batch; a failed batch is split into new ones).
    CREATE TABLE settlement_batches (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      blockchain_id uuid NOT NULL REFERENCES blockchains(id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('BATCHED', 'SUBMITTED', 'CONFIRMED', 'FAILED', 'REORGED', 'REPLACED')),
      parent_batch_id uuid REFERENCES settlement_batches(id),
      market_ids uuid[] NOT NULL,
      trade_ids uuid[] NOT NULL,
      trade_count integer NOT NULL,
      -- The organisations whose trades the batch holds: each is told of the batch's transitions.
      organization_ids uuid[] NOT NULL DEFAULT '{}',
      from_address text,
      nonce bigint,
      tx_hash text,
      raw_tx text,
      replaced_tx_hashes text[] NOT NULL DEFAULT '{}',
      gas_limit numeric(78, 0),
      max_fee_per_gas numeric(78, 0),
      max_priority_fee_per_gas numeric(78, 0),
      block_number bigint,
      block_hash text,
      gas_used numeric(78, 0),
      -- Gas used x effective gas price, wei.
      fee_paid numeric(78, 0),
      failure_reason text,
      submitted_at timestamptz,
      confirmed_at timestamptz,
      -- When the proceeds of a final batch were handed back from the contract to the wallets.
      released_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX settlement_batches_chain_status_idx ON settlement_batches (blockchain_id, status, created_at);
    CREATE INDEX settlement_batches_created_idx ON settlement_batches (created_at DESC, id DESC);
    CREATE INDEX settlement_batches_markets_idx ON settlement_batches USING gin (market_ids);

    -- Every status change of a batch, with its time.
    CREATE TABLE settlement_batch_transitions (
      id bigserial PRIMARY KEY,
      batch_id uuid NOT NULL REFERENCES settlement_batches(id) ON DELETE CASCADE,
      from_status text,
      to_status text NOT NULL,
      tx_hash text,
      detail text,
      at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX settlement_batch_transitions_batch_idx ON settlement_batch_transitions (batch_id, id);

    -- Transactions a paying wallet sent to fund the contract for a batch: their gas was charged to the
    -- wallet's ledger, and is given back if a reorg drops them.
    CREATE TABLE settlement_funding_txs (
      tx_hash text PRIMARY KEY,
      batch_id uuid NOT NULL REFERENCES settlement_batches(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL,
      organization_id uuid NOT NULL,
      wallet_id uuid NOT NULL,
      block_hash text NOT NULL,
      gas_refunded boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX settlement_funding_txs_batch_idx ON settlement_funding_txs (batch_id);

    -- One batcher per chain at a time: the holder renews its lease; another takes over when it lapses.
    CREATE TABLE settlement_leases (
      blockchain_id uuid PRIMARY KEY REFERENCES blockchains(id) ON DELETE CASCADE,
      holder text NOT NULL,
      expires_at timestamptz NOT NULL
    );

    -- The key a trade is settled under on chain (the contract's replay bitmap is indexed by it).
    ALTER TABLE trades ADD COLUMN settlement_key bigserial;
    CREATE UNIQUE INDEX trades_settlement_key_idx ON trades (settlement_key);
    CREATE INDEX trades_settlement_batch_idx ON trades (settlement_batch_id) WHERE settlement_batch_id IS NOT NULL;
    CREATE INDEX trades_unsettled_idx ON trades (settlement_status) WHERE settlement_status <> 'CONFIRMED';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS trades_unsettled_idx;
    DROP INDEX IF EXISTS trades_settlement_batch_idx;
    ALTER TABLE trades DROP COLUMN IF EXISTS settlement_key;
    DROP TABLE IF EXISTS settlement_leases, settlement_funding_txs, settlement_batch_transitions, settlement_batches, settlement_contracts;
  `);
}
