import { Knex } from 'knex';

/**
 * A deposit address's sweep due again: one that could not be arranged when its deposit was
 * confirmed (the node did not answer, the master wallet had no gas to top the address up) or that an
 * AML hold stopped. The worker tries each again when due (withdrawals/sweeps-due.ts); one row per
 * address, asset and purpose (the wallet's autoSweep, or a paid checkout's settlement), the newest
 * deposit's id kept for what the sweep needs to know of it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sweeps_due (
      address_id uuid NOT NULL REFERENCES addresses(id) ON DELETE CASCADE,
      asset_id uuid NOT NULL,
      purpose text NOT NULL CHECK (purpose IN ('auto_sweep', 'checkout_settlement')),
      deposit_id uuid NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      due_at timestamptz NOT NULL,
      last_error text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (address_id, asset_id, purpose)
    );
    CREATE INDEX sweeps_due_due_at_idx ON sweeps_due (due_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE sweeps_due');
}
