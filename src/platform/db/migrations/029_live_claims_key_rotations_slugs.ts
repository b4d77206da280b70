import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The live-process id (SessionHolder) of the node whose request holds an idempotency claim: once
    -- that process's PostgreSQL session is gone, a retry takes the claim over at once.
    ALTER TABLE idempotency_keys ADD COLUMN holder integer;

  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE idempotency_keys DROP COLUMN holder;
  `);
}
