import { Knex } from 'knex';

/**
 * The operator: one organisation flagged `is_operator`, the only one whose keys may hold
 * `orderbook_market:manage` (markets are shared by every organisation). Tenant keys issued before
 * this rule lose that permission.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.boolean('is_operator').notNullable().defaultTo(false);
  });
  await knex.raw('CREATE UNIQUE INDEX organizations_one_operator ON organizations ((true)) WHERE is_operator');
  await knex.raw(`UPDATE api_keys SET scopes = array_remove(scopes, 'orderbook_market:manage') WHERE 'orderbook_market:manage' = ANY (scopes)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS organizations_one_operator');
  await knex.schema.alterTable('organizations', (t) => {
    t.dropColumn('is_operator');
  });
}
