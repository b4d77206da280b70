import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A held signing request waits as a transfer of kind 'signing' (approved or rejected like any
    -- transfer); a broadcast transaction is that transfer's one line, sent by the transaction sender.
    ALTER TABLE transfers DROP CONSTRAINT IF EXISTS transfers_kind_check;
    ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup', 'swap', 'agent_payment', 'trading_deposit', 'signing'));

    -- Every signing request and its outcome, for audit. The request is what the caller asked to sign
    -- (never a key); signature is the signature, or the signed raw transaction.
    CREATE TABLE signing_requests (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id),
      address_id uuid REFERENCES addresses(id),
      signer text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('MESSAGE', 'TYPED_DATA', 'TRANSACTION')),
      request jsonb NOT NULL,
      blockchain_id uuid REFERENCES blockchains(id),
      broadcast boolean NOT NULL DEFAULT false,
      risks text[] NOT NULL DEFAULT '{}',
      acknowledged_risk text,
      status text NOT NULL CHECK (status IN ('PENDING_APPROVAL', 'QUEUED', 'SIGNED', 'CONFIRMED', 'REFUSED', 'REJECTED', 'FAILED')),
      signature text,
      tx_hash text,
      transfer_id uuid UNIQUE REFERENCES transfers(id),
      error_code text,
      reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX signing_requests_wallet_idx ON signing_requests (organization_id, master_wallet_id, created_at DESC);
    CREATE INDEX signing_requests_address_idx ON signing_requests (address_id, created_at DESC) WHERE address_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE signing_requests;
    DELETE FROM transfer_items WHERE transfer_id IN (SELECT id FROM transfers WHERE kind = 'signing');
    DELETE FROM transfers WHERE kind = 'signing';
    ALTER TABLE transfers DROP CONSTRAINT transfers_kind_check;
    ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup', 'swap', 'agent_payment', 'trading_deposit'));
  `);
}
