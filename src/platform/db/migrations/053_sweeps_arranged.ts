import { Knex } from 'knex';

/**
 * A sweep arranged and not yet final: which address, asset and purpose its transfer sweeps, and for
 * which deposit. If the transfer fails (its gas top-up was refused, the transaction reverted), the
 * sweep is due again (sweeps_due) rather than leaving the funds at the address until its next
 * deposit, its failed attempts carried over so the delay keeps growing; once the transfer confirms
 * the row goes (withdrawals/sweeps-due.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sweeps_arranged (
      transfer_id uuid PRIMARY KEY REFERENCES transfers(id) ON DELETE CASCADE,
      address_id uuid NOT NULL REFERENCES addresses(id) ON DELETE CASCADE,
      asset_id uuid NOT NULL,
      purpose text NOT NULL CHECK (purpose IN ('auto_sweep', 'checkout_settlement')),
      deposit_id uuid NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE sweeps_arranged');
}
