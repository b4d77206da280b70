import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A reusable page a payer completes: a fixed or open amount in a currency, paid into checkout
    -- addresses derived under the settlement master wallet.
    CREATE TABLE payment_links (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      ref_id uuid NOT NULL DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      slug text NOT NULL UNIQUE,
      channel text NOT NULL DEFAULT 'api',
      currency text NOT NULL,
      -- NULL: an open amount, the payer chooses it.
      amount numeric(78, 18) CHECK (amount IS NULL OR amount > 0),
      payment_limit integer CHECK (payment_limit IS NULL OR payment_limit > 0),
      payments_consumed integer NOT NULL DEFAULT 0,
      expires_at timestamptz,
      evm_settlement_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      solana_settlement_wallet_id text,
      allowed_blockchain_ids uuid[] NOT NULL,
      allowed_asset_ids uuid[] NOT NULL,
      redirect_url text,
      success_message text,
      failure_message text,
      metadata jsonb NOT NULL DEFAULT '{}',
      img_url text,
      is_active boolean NOT NULL DEFAULT true,
      deleted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX payment_links_org_idx ON payment_links (organization_id, created_at DESC) WHERE deleted_at IS NULL;
    CREATE INDEX payment_links_wallet_idx ON payment_links (evm_settlement_wallet_id) WHERE deleted_at IS NULL;

    -- A merchant's request for one exact payment, with its own checkout.
    CREATE TABLE payment_intents (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('REQUIRES_PAYMENT', 'PROCESSING', 'SUCCEEDED', 'UNDERPAID', 'OVERPAID', 'EXPIRED', 'CANCELLED')),
      description text,
      metadata jsonb NOT NULL DEFAULT '{}',
      cancellation_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX payment_intents_org_idx ON payment_intents (organization_id, created_at DESC);

    -- The mechanics links and intents share: one fresh deposit address, the exact amount of one
    -- asset expected there, an expiry, and what has arrived.
    CREATE TABLE checkouts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      payment_link_id uuid REFERENCES payment_links(id) ON DELETE CASCADE,
      payment_intent_id uuid UNIQUE REFERENCES payment_intents(id) ON DELETE CASCADE,
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      asset_id uuid NOT NULL REFERENCES assets(id),
      address_id uuid NOT NULL UNIQUE REFERENCES addresses(id) ON DELETE CASCADE,
      deposit_address text NOT NULL,
      expected_raw numeric(78, 0) NOT NULL CHECK (expected_raw > 0),
      -- Counted payments that reached the required confirmations, and those still confirming.
      received_raw numeric(78, 0) NOT NULL DEFAULT 0,
      confirming_raw numeric(78, 0) NOT NULL DEFAULT 0,
      -- What the chain head shows at the address before the deposit is recorded (detection).
      seen_raw numeric(78, 0) NOT NULL DEFAULT 0,
      status text NOT NULL DEFAULT 'AWAITING_PAYMENT'
        CHECK (status IN ('AWAITING_PAYMENT', 'DETECTED', 'CONFIRMING', 'PAID', 'UNDERPAID', 'OVERPAID', 'EXPIRED', 'CANCELLED')),
      expires_at timestamptz NOT NULL,
      paid_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((payment_link_id IS NULL) <> (payment_intent_id IS NULL))
    );
    CREATE INDEX checkouts_link_idx ON checkouts (payment_link_id, created_at DESC) WHERE payment_link_id IS NOT NULL;
    CREATE INDEX checkouts_open_idx ON checkouts (expires_at) WHERE status IN ('AWAITING_PAYMENT', 'DETECTED', 'CONFIRMING', 'UNDERPAID');

    -- Each deposit to a checkout address, classified: PAYMENT counts towards the amount; LATE arrived
    -- after the checkout expired or was cancelled; REPEAT arrived after it was already paid.
    CREATE TABLE checkout_transfers (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      checkout_id uuid NOT NULL REFERENCES checkouts(id) ON DELETE CASCADE,
      chain_transfer_id uuid NOT NULL UNIQUE REFERENCES chain_transfers(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('PAYMENT', 'LATE', 'REPEAT')),
      status text NOT NULL CHECK (status IN ('CONFIRMING', 'CONFIRMED', 'REVERTED')),
      tx_hash text NOT NULL,
      from_address text NOT NULL,
      raw_value numeric(78, 0) NOT NULL,
      block_number bigint NOT NULL,
      confirmations integer NOT NULL,
      required_confirmations integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX checkout_transfers_checkout_idx ON checkout_transfers (checkout_id, created_at);
    CREATE INDEX checkout_transfers_confirming_idx ON checkout_transfers (status) WHERE status = 'CONFIRMING';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE checkout_transfers, checkouts, payment_intents, payment_links;`);
}
