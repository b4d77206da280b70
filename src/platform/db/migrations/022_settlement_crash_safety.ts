import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A funding transaction is recorded, signed, in the transaction that takes its nonce, and only
    -- then broadcast: a crash or a failed broadcast leaves bytes to send again, never a nonce gap.
    -- SIGNED: recorded, maybe not broadcast; SUBMITTED: the node took it; MINED: its receipt is in and
    -- its gas charged; DROPPED: it can never be mined (its nonce went to another transaction, the
    -- node refused it, or a reorg took it out).
    ALTER TABLE settlement_funding_txs
      ADD COLUMN status text NOT NULL DEFAULT 'MINED' CHECK (status IN ('SIGNED', 'SUBMITTED', 'MINED', 'DROPPED')),
      ADD COLUMN from_address text,
      ADD COLUMN nonce bigint,
      ADD COLUMN raw_tx text,
      ADD COLUMN failure_reason text,
      ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
      ALTER COLUMN block_hash DROP NOT NULL,
      ALTER COLUMN batch_id DROP NOT NULL;
    ALTER TABLE settlement_funding_txs ALTER COLUMN status SET DEFAULT 'SIGNED';
    CREATE INDEX settlement_funding_txs_open_idx ON settlement_funding_txs (blockchain_id, created_at) WHERE status IN ('SIGNED', 'SUBMITTED');

    -- A fencing token, raised at every taking of a chain's lease: each state change of the batcher
    -- commits only while its worker's token is still the lease's (a worker paused past its lease cannot).
    ALTER TABLE settlement_leases ADD COLUMN token bigint NOT NULL DEFAULT 0;

    -- A trade whose batch's funding the chain refused (maybe for a while: a wallet without coin for
    -- gas) is queued again, not failed: how often that happened, and when it may be batched again.
    ALTER TABLE trades ADD COLUMN settlement_attempts integer NOT NULL DEFAULT 0, ADD COLUMN settlement_retry_at timestamptz;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE trades DROP COLUMN IF EXISTS settlement_attempts, DROP COLUMN IF EXISTS settlement_retry_at;
    ALTER TABLE settlement_leases DROP COLUMN IF EXISTS token;
    DROP INDEX IF EXISTS settlement_funding_txs_open_idx;
    DELETE FROM settlement_funding_txs WHERE block_hash IS NULL OR batch_id IS NULL;
    ALTER TABLE settlement_funding_txs
      DROP COLUMN status, DROP COLUMN from_address, DROP COLUMN nonce, DROP COLUMN raw_tx, DROP COLUMN failure_reason, DROP COLUMN updated_at,
      ALTER COLUMN block_hash SET NOT NULL,
      ALTER COLUMN batch_id SET NOT NULL;
  `);
}
