import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- An operator's monthly request quota for the organisation (keel quota set); null: its tier's.
    ALTER TABLE organizations ADD COLUMN monthly_quota bigint CHECK (monthly_quota > 0);

    -- Requests served, per organisation, UTC day and API key, flushed from each node's counts. No
    -- foreign key to the key: a revoked or deleted key's requests still count in its month.
    CREATE TABLE api_usage_daily (
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      day date NOT NULL,
      api_key_id uuid NOT NULL,
      requests bigint NOT NULL CHECK (requests >= 0),
      PRIMARY KEY (organization_id, day, api_key_id)
    );

    -- The month's total of the rows above, written in the same transaction: what a lost Redis count
    -- is seeded from again, in one row.
    CREATE TABLE api_usage_monthly (
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      month date NOT NULL CHECK (extract(day FROM month) = 1),
      requests bigint NOT NULL CHECK (requests >= 0),
      PRIMARY KEY (organization_id, month)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE api_usage_monthly;
    DROP TABLE api_usage_daily;
    ALTER TABLE organizations DROP COLUMN monthly_quota;
  `);
}
