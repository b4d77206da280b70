import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A withdrawal (or sweep) request: one or more lines from one wallet address on one chain.
    CREATE TABLE transfers (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      address_id uuid REFERENCES addresses(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      from_address text NOT NULL,
      kind text NOT NULL DEFAULT 'withdrawal' CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup')),
      status text NOT NULL CHECK (status IN ('PENDING_APPROVAL', 'QUEUED', 'SUBMITTED', 'CONFIRMED', 'FAILED', 'REJECTED')),
      note text,
      decided_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX transfers_org_idx ON transfers (organization_id, created_at DESC);

    -- One on-chain transaction per line. Its nonce is taken from sender_nonces under a row lock, and
    -- the signed transaction is stored before it is broadcast, so a crash can only re-send the same bytes.
    CREATE TABLE transfer_items (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      transfer_id uuid NOT NULL REFERENCES transfers(id) ON DELETE CASCADE,
      position integer NOT NULL,
      asset_id uuid NOT NULL REFERENCES assets(id),
      recipient text NOT NULL,
      raw_amount numeric(78, 0) NOT NULL CHECK (raw_amount > 0),
      -- Runs only after this item confirmed (a sweep's token transfer waits for its gas top-up).
      after_item_id uuid REFERENCES transfer_items(id),
      status text NOT NULL DEFAULT 'QUEUED' CHECK (status IN ('PENDING_APPROVAL', 'QUEUED', 'SIGNED', 'SUBMITTED', 'CONFIRMED', 'FAILED', 'REJECTED')),
      nonce bigint,
      tx_hash text,
      raw_tx text,
      gas_limit numeric(78, 0),
      max_fee_per_gas numeric(78, 0),
      max_priority_fee_per_gas numeric(78, 0),
      replaced_tx_hashes text[] NOT NULL DEFAULT '{}',
      submitted_at timestamptz,
      block_number bigint,
      gas_used numeric(78, 0),
      -- gas used × effective gas price, in wei
      fee_paid numeric(78, 0),
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (transfer_id, position)
    );
    CREATE INDEX transfer_items_open_idx ON transfer_items (status) WHERE status IN ('QUEUED', 'SIGNED', 'SUBMITTED');

    -- The next nonce Keel will use per sending address and chain.
    CREATE TABLE sender_nonces (
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      address text NOT NULL,
      next_nonce bigint NOT NULL,
      PRIMARY KEY (blockchain_id, address)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE sender_nonces, transfer_items, transfers;`);
}
