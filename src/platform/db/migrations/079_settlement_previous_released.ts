import { Knex } from 'knex';

/**
 * When `keel settlement migrate` handed back what the previous contract held (null: not yet). Until
 * then `keel settlement deploy` refuses to replace the chain's contract again, which would forget
 * the previous one and its balances.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE settlement_contracts ADD COLUMN previous_released_at timestamptz`);
  // A previous contract recorded by an earlier Keel counts as migrated, as that Keel treated it: a
  // contract of an older version (which `keel settlement migrate` cannot run against) stays replaceable.
  await knex.raw(`UPDATE settlement_contracts SET previous_released_at = updated_at WHERE previous_address IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE settlement_contracts DROP COLUMN previous_released_at`);
}
