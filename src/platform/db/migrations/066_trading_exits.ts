import { Knex } from 'knex';

/**
 * The exits Keel knows were asked of a chain's settlement contract (its escape hatch,
 * `requestExit()`) by one of Keel's wallets: asked by `keel settlement exit`, or seen in the
 * contract's `ExitRequested` events by the settlement worker (a transaction from the wallet's
 * address that Keel did not make itself, a signed transaction, say). From the request on the wallet
 * places no order on the chain's markets and its resting orders there are cancelled: once the delay
 * has passed its balance may leave the contract at any moment, so a trade against it could not
 * settle. The contract has no call that withdraws a request, so a row is never removed; one of an
 * earlier contract of the chain (a dev chain reset deploys a new one) no longer applies.
 * `wallet_id` as the ledger keys its accounts (a deposit address's id, or the master wallet's).
 * settlement_contracts.exits_scanned_block: the last block whose ExitRequested events were read.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE trading_exits (
      blockchain_id uuid NOT NULL REFERENCES blockchains(id) ON DELETE CASCADE,
      contract_address text NOT NULL,
      account text NOT NULL,
      organization_id uuid NOT NULL,
      wallet_id uuid NOT NULL,
      requested_at timestamptz NOT NULL,
      available_at timestamptz NOT NULL,
      tx_hash text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (blockchain_id, contract_address, account)
    );
    CREATE INDEX trading_exits_wallet_idx ON trading_exits (wallet_id);
    ALTER TABLE settlement_contracts ADD COLUMN exits_scanned_block bigint;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE settlement_contracts DROP COLUMN IF EXISTS exits_scanned_block;
    DROP TABLE IF EXISTS trading_exits;
  `);
}
