import { Knex } from 'knex';

/**
 * What a wallet owes in an asset: a chain reorg took back a deposit whose funds had already been
 * spent or locked. Repaid from the wallet's next deposits; the wallet cannot spend the asset meanwhile.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE wallet_debts (
      wallet_id uuid NOT NULL,
      asset_id uuid NOT NULL REFERENCES assets(id),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      amount numeric(78, 0) NOT NULL CHECK (amount >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (wallet_id, asset_id)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE wallet_debts;`);
}
