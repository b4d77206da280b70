import { Knex } from 'knex';

/**
 * The results of the units of work a request committed, recorded on its idempotency claim in the
 * same transaction as the work (src/platform/db/unit-of-work.ts): step number → sealed result. A
 * retry after a crash between the commit and the stored response replays them instead of doing
 * the work again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE idempotency_keys ADD COLUMN results jsonb NOT NULL DEFAULT '{}'::jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE idempotency_keys DROP COLUMN results');
}
