import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- An autonomous caller of the organisation with its own API key, wallets and spending policy.
    CREATE TABLE agents (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'SUSPENDED')),
      metadata jsonb NOT NULL DEFAULT '{}',
      -- Deleted agents keep their rows for the payments and policy history; they are gone from the API.
      deleted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX agents_org_idx ON agents (organization_id, created_at DESC) WHERE deleted_at IS NULL;

    -- An agent's key is an ordinary API key row linked to the agent, with the one scope 'agent'.
    ALTER TABLE api_keys ADD COLUMN agent_id uuid REFERENCES agents(id) ON DELETE CASCADE;
    CREATE INDEX api_keys_agent_idx ON api_keys (agent_id) WHERE agent_id IS NOT NULL;

    -- A deposit address of one of the organisation's master wallets, linked to an agent.
    CREATE TABLE agent_wallets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      address_id uuid NOT NULL UNIQUE REFERENCES addresses(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      label text,
      is_active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX agent_wallets_agent_idx ON agent_wallets (agent_id, created_at DESC);

    -- The agent's spending policy (one per agent, versioned); every change is an audit row.
    CREATE TABLE agent_policies (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      agent_id uuid NOT NULL UNIQUE REFERENCES agents(id) ON DELETE CASCADE,
      version integer NOT NULL DEFAULT 1,
      rules jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE agent_policy_changes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      policy_id uuid NOT NULL REFERENCES agent_policies(id) ON DELETE CASCADE,
      version integer NOT NULL,
      -- The API key that made the change.
      changed_by uuid REFERENCES api_keys(id) ON DELETE SET NULL,
      previous_rules jsonb,
      rules jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX agent_policy_changes_agent_idx ON agent_policy_changes (agent_id, created_at DESC);

    CREATE TABLE agent_payments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      agent_wallet_id uuid NOT NULL REFERENCES agent_wallets(id) ON DELETE CASCADE,
      kind text NOT NULL DEFAULT 'TRANSFER' CHECK (kind IN ('TRANSFER')),
      status text NOT NULL CHECK (status IN ('PENDING', 'POLICY_DENIED', 'APPROVED', 'SUBMITTED', 'EXECUTED', 'FAILED')),
      asset_id uuid NOT NULL REFERENCES assets(id),
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      recipient text NOT NULL,
      raw_amount numeric(78, 0) NOT NULL CHECK (raw_amount > 0),
      amount_usd numeric,
      policy_id uuid REFERENCES agent_policies(id) ON DELETE SET NULL,
      policy_evaluation jsonb NOT NULL,
      denial_reason text,
      transfer_id uuid REFERENCES transfers(id) ON DELETE SET NULL,
      transfer_item_id uuid UNIQUE REFERENCES transfer_items(id) ON DELETE SET NULL,
      tx_hash text,
      failure_reason text,
      idempotency_key text,
      decided_by uuid REFERENCES api_keys(id) ON DELETE SET NULL,
      decided_at timestamptz,
      executed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (agent_id, idempotency_key)
    );
    CREATE INDEX agent_payments_agent_idx ON agent_payments (agent_id, created_at DESC);
    -- The rolling-window sums read what counts against the limits.
    CREATE INDEX agent_payments_window_idx ON agent_payments (agent_id, asset_id, created_at) WHERE status IN ('PENDING', 'APPROVED', 'SUBMITTED', 'EXECUTED');

    ALTER TABLE transfers DROP CONSTRAINT transfers_kind_check;
    ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup', 'swap', 'agent_payment'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE transfers DROP CONSTRAINT transfers_kind_check;
    ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup', 'swap'));
    DROP TABLE agent_payments, agent_policy_changes, agent_policies, agent_wallets;
    ALTER TABLE api_keys DROP COLUMN agent_id;
    DROP TABLE agents;
  `);
}
