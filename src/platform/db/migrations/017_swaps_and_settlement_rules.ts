import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A transfer line may be a contract call (a DEX approval or swap) rather than a plain send:
    -- call_to/call_data/call_value are what the transaction sender signs; recipient and raw_amount
    -- stay what the line moves (an approval moves nothing: raw_amount 0).
    ALTER TABLE transfers DROP CONSTRAINT IF EXISTS transfers_kind_check;
    ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup', 'swap'));
    ALTER TABLE transfer_items DROP CONSTRAINT IF EXISTS transfer_items_raw_amount_check;
    ALTER TABLE transfer_items ADD CONSTRAINT transfer_items_raw_amount_check CHECK (raw_amount >= 0);
    ALTER TABLE transfer_items ADD COLUMN call_to text, ADD COLUMN call_data text, ADD COLUMN call_value numeric(78, 0);
    CREATE INDEX transfer_items_tx_hash_idx ON transfer_items (tx_hash) WHERE tx_hash IS NOT NULL;

    -- A swap on the chain's DEX from a wallet address; its transactions are the lines of one
    -- transfer of kind 'swap' (an approval when needed, then the swap).
    CREATE TABLE swaps (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      address_id uuid REFERENCES addresses(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      from_address text NOT NULL,
      recipient text NOT NULL,
      src_asset_id uuid NOT NULL REFERENCES assets(id),
      dst_asset_id uuid NOT NULL REFERENCES assets(id),
      input_raw numeric(78, 0) NOT NULL CHECK (input_raw > 0),
      quoted_output_raw numeric(78, 0) NOT NULL,
      min_output_raw numeric(78, 0) NOT NULL,
      output_raw numeric(78, 0),
      route text[] NOT NULL,
      router text NOT NULL,
      order_type text NOT NULL CHECK (order_type IN ('FASTEST', 'CHEAPEST', 'RECOMMENDED', 'NO_SLIPPAGE')),
      slippage_tolerance numeric NOT NULL,
      price_impact numeric NOT NULL,
      status text NOT NULL CHECK (status IN ('PENDING_APPROVAL', 'QUEUED', 'SUBMITTED', 'EXECUTED', 'FAILED', 'REJECTED')),
      transfer_id uuid NOT NULL REFERENCES transfers(id) ON DELETE CASCADE,
      swap_item_id uuid NOT NULL REFERENCES transfer_items(id) ON DELETE CASCADE,
      tx_hash text,
      gas_fee numeric(78, 0),
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX swaps_org_idx ON swaps (organization_id, created_at DESC);
    CREATE UNIQUE INDEX swaps_item_idx ON swaps (swap_item_id);

    -- A settlement rule of a master wallet (address_id NULL: deposits to its own address) or of one
    -- deposit address. Deleted rules are kept (deleted_at) so their executions stay readable.
    CREATE TABLE settlement_rules (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      address_id uuid REFERENCES addresses(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      order_type text NOT NULL CHECK (order_type IN ('FASTEST', 'CHEAPEST', 'RECOMMENDED', 'NO_SLIPPAGE')),
      slippage_tolerance numeric NOT NULL CHECK (slippage_tolerance >= 0 AND slippage_tolerance <= 50),
      is_active boolean NOT NULL DEFAULT true,
      source_blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      source_asset_ids uuid[] NOT NULL DEFAULT '{}',
      min_amount numeric,
      max_amount numeric,
      destination_blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      destination_asset_id uuid NOT NULL REFERENCES assets(id),
      destination_address text NOT NULL,
      delay_seconds integer NOT NULL DEFAULT 0 CHECK (delay_seconds >= 0),
      deleted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX settlement_rules_wallet_idx ON settlement_rules (master_wallet_id) WHERE deleted_at IS NULL;
    CREATE INDEX settlement_rules_org_idx ON settlement_rules (organization_id, created_at DESC);

    -- One execution per (rule, deposit), ever: the unique key is what makes a rule fire exactly once.
    CREATE TABLE settlement_rule_executions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      rule_id uuid NOT NULL REFERENCES settlement_rules(id) ON DELETE CASCADE,
      chain_transfer_id uuid NOT NULL REFERENCES chain_transfers(id) ON DELETE CASCADE,
      asset_id uuid NOT NULL REFERENCES assets(id),
      raw_amount numeric(78, 0) NOT NULL,
      kind text CHECK (kind IN ('sweep', 'swap')),
      status text NOT NULL CHECK (status IN ('PENDING', 'SUBMITTED', 'EXECUTED', 'FAILED', 'CANCELLED')),
      attempts integer NOT NULL DEFAULT 0,
      run_after timestamptz NOT NULL DEFAULT now(),
      transfer_id uuid REFERENCES transfers(id) ON DELETE SET NULL,
      transfer_item_id uuid REFERENCES transfer_items(id) ON DELETE SET NULL,
      swap_id uuid REFERENCES swaps(id) ON DELETE SET NULL,
      tx_hash text,
      error text,
      deposit_reverted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (rule_id, chain_transfer_id)
    );
    CREATE INDEX settlement_rule_executions_due_idx ON settlement_rule_executions (run_after) WHERE status = 'PENDING';
    CREATE INDEX settlement_rule_executions_item_idx ON settlement_rule_executions (transfer_item_id) WHERE status = 'SUBMITTED';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE settlement_rule_executions, settlement_rules, swaps;
    DELETE FROM transfer_items WHERE transfer_id IN (SELECT id FROM transfers WHERE kind = 'swap');
    DELETE FROM transfers WHERE kind = 'swap';
    ALTER TABLE transfer_items DROP COLUMN call_to, DROP COLUMN call_data, DROP COLUMN call_value;
    ALTER TABLE transfer_items DROP CONSTRAINT transfer_items_raw_amount_check;
    ALTER TABLE transfer_items ADD CONSTRAINT transfer_items_raw_amount_check CHECK (raw_amount > 0);
    ALTER TABLE transfers DROP CONSTRAINT transfers_kind_check;
    ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup'));
  `);
}
