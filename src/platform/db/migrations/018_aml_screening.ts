import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Sanctions lists loaded with \`keel aml load\`: each load is a version; the newest by list date
    -- (then by load) is screened against when it is newer than the snapshot Keel ships.
    CREATE TABLE sanctions_list_versions (
      id bigserial PRIMARY KEY,
      source text NOT NULL,
      list_date date,
      address_count integer NOT NULL,
      loaded_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE sanctions_list_entries (
      version_id bigint NOT NULL REFERENCES sanctions_list_versions(id) ON DELETE CASCADE,
      list text NOT NULL,
      address text NOT NULL,
      PRIMARY KEY (version_id, list, address)
    );

    -- A deposit from a sanctioned address: when it was flagged and the list entries it matched.
    -- A flagged deposit holds its address from auto-sweep until an admin releases it (who, when, why).
    ALTER TABLE chain_transfers
      ADD COLUMN aml_flagged_at timestamptz,
      ADD COLUMN aml_matches jsonb,
      ADD COLUMN aml_released_at timestamptz,
      ADD COLUMN aml_released_by uuid,
      ADD COLUMN aml_release_note text;
    CREATE INDEX chain_transfers_aml_flagged_idx ON chain_transfers (organization_id, aml_flagged_at) WHERE aml_flagged_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE chain_transfers DROP COLUMN aml_flagged_at, DROP COLUMN aml_matches, DROP COLUMN aml_released_at, DROP COLUMN aml_released_by, DROP COLUMN aml_release_note;
    DROP TABLE sanctions_list_entries, sanctions_list_versions;
  `);
}
