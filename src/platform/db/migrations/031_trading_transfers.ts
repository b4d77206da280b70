import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Moves between a wallet's custody and its trading balance in the settlement contract.
    -- DEPOSIT: an on-chain deposit from the wallet's address (a transfer of kind 'trading_deposit',
    -- sent by the transaction sender), credited to trading once its line is CONFIRMED.
    -- WITHDRAWAL: taken from trading when requested, signed by the wallet's key (EIP-712) and
    -- submitted by the settlement operator; to the wallet's own address (credited to custody once
    -- confirmed) or an external one.
    CREATE SEQUENCE trading_withdrawal_keys;
    CREATE TABLE trading_transfers (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL REFERENCES blockchains(id) ON DELETE CASCADE,
      master_wallet_id uuid NOT NULL,
      address_id uuid,
      -- The ledger wallet: the deposit address id, else the master wallet id.
      wallet_id uuid NOT NULL,
      wallet_address text NOT NULL,
      asset_id uuid NOT NULL REFERENCES assets(id),
      direction text NOT NULL CHECK (direction IN ('DEPOSIT', 'WITHDRAWAL')),
      raw_amount numeric(78, 0) NOT NULL CHECK (raw_amount > 0),
      recipient text NOT NULL,
      status text NOT NULL CHECK (status IN ('PENDING_APPROVAL', 'PENDING', 'SUBMITTED', 'CONFIRMED', 'FAILED', 'REJECTED')),
      -- DEPOSIT: the transfer and its line that calls the contract (and the gas top-up it waits for, if sponsored).
      transfer_id uuid REFERENCES transfers(id),
      deposit_item_id uuid REFERENCES transfer_items(id),
      gas_sponsor_wallet_id uuid,
      -- A deposit \`keel settlement migrate\` made: its amount was already in the trading ledger
      -- (a balance from before the contract held trading balances), so it is not credited again.
      migration boolean NOT NULL DEFAULT false,
      -- WITHDRAWAL: the key the wallet signs and the contract pays once (a bitmap of keys on chain).
      withdrawal_key bigint UNIQUE DEFAULT nextval('trading_withdrawal_keys'),
      -- WITHDRAWAL: the operator transaction that pays it out (with other withdrawals of the same
      -- step), recorded before it is broadcast.
      from_address text,
      nonce bigint,
      tx_hash text,
      raw_tx text,
      block_number bigint,
      block_hash text,
      failure_reason text,
      decided_at timestamptz,
      submitted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX trading_transfers_wallet_idx ON trading_transfers (organization_id, wallet_id, created_at DESC);
    CREATE INDEX trading_transfers_open_idx ON trading_transfers (blockchain_id, direction, status, created_at) WHERE status IN ('PENDING', 'SUBMITTED', 'PENDING_APPROVAL');
    CREATE UNIQUE INDEX trading_transfers_item_idx ON trading_transfers (deposit_item_id) WHERE deposit_item_id IS NOT NULL;

    ALTER TABLE transfers DROP CONSTRAINT IF EXISTS transfers_kind_check;
    ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup', 'swap', 'agent_payment', 'trading_deposit'));

    -- The contract a chain settled through before the current one (a redeploy keeps it), for
    -- \`keel settlement migrate\` to hand back what the old contract still holds.
    ALTER TABLE settlement_contracts ADD COLUMN previous_address text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE settlement_contracts DROP COLUMN IF EXISTS previous_address;
    DROP TABLE IF EXISTS trading_transfers;
    DROP SEQUENCE IF EXISTS trading_withdrawal_keys;
    DELETE FROM transfer_items WHERE transfer_id IN (SELECT id FROM transfers WHERE kind = 'trading_deposit');
    DELETE FROM transfers WHERE kind = 'trading_deposit';
    ALTER TABLE transfers DROP CONSTRAINT transfers_kind_check;
    ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('withdrawal', 'sweep', 'gas_topup', 'swap', 'agent_payment'));
  `);
}
