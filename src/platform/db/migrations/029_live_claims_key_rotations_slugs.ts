import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The live-process id (SessionHolder) of the node whose request holds an idempotency claim: once
    -- that process's PostgreSQL session is gone, a retry takes the claim over at once.
    ALTER TABLE idempotency_keys ADD COLUMN holder integer;

    -- Raised by every rotation of a key; an access token carries the generation it was issued
    -- under, and one of an earlier generation is refused: rotating a key ends its tokens.
    ALTER TABLE api_keys ADD COLUMN generation integer NOT NULL DEFAULT 0;

    -- Every slug an organisation's payment link has used, kept after the link is renamed or
    -- deleted: a slug is never handed to another organisation, so an old URL or QR code never pays
    -- someone else. No foreign key: the record outlives everything else.
    CREATE TABLE payment_link_slugs (
      slug text PRIMARY KEY,
      organization_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO payment_link_slugs (slug, organization_id)
      SELECT DISTINCT ON (slug) slug, organization_id FROM payment_links ORDER BY slug, created_at;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE payment_link_slugs;
    ALTER TABLE api_keys DROP COLUMN generation;
    ALTER TABLE idempotency_keys DROP COLUMN holder;
  `);
}
