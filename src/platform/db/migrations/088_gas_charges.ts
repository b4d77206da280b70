import { Knex } from 'knex';

/**
 * What each gas charge took in all (custody-ledger-sync: chargeGasTo): the ledger's debit holds only
 * what the wallet had available, the rest became its debt. A reorg that drops the transaction gives
 * back exactly this fee (repaying that debt first), not the fee another fork's mining of the same
 * transaction paid. A charge made before this table has none: only its debit is given back.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE gas_charges (
      -- The charge's ledger reference (gas:<line id>, gas:<chain>:<tx>[#n]).
      reference text PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      wallet_id uuid NOT NULL,
      asset_id uuid NOT NULL REFERENCES assets(id),
      -- The whole fee, in the native coin's base units: the debit plus the debt it left.
      fee numeric(78, 0) NOT NULL CHECK (fee > 0),
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS gas_charges');
}
