import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The live-process id (SessionHolder) of the node whose request holds an idempotency claim: once
    -- that process's PostgreSQL session is gone, a retry takes the claim over at once.
    ALTER TABLE idempotency_keys ADD COLUMN holder integer;

    -- Raised by every rotation of a key; an access token carries the generation it was issued
    -- under, and one of an earlier generation is refused: rotating a key ends its tokens.
    ALTER TABLE api_keys ADD COLUMN generation integer NOT NULL DEFAULT 0;

  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE api_keys DROP COLUMN generation;
    ALTER TABLE idempotency_keys DROP COLUMN holder;
  `);
}
