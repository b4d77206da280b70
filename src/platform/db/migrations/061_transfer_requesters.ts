import { Knex } from 'knex';

/**
 * Four eyes on a held transfer (withdrawals/transfer-approvals.ts): the API key that asked for it
 * (an access token counts as the key that issued it) and the one that approved or rejected it. The
 * key that asked may not approve. Null requested_by: a transfer Keel arranged itself (a sweep, a
 * gas top-up, an agent payment) or one recorded before this column, which any admin key decides.
 * No foreign key: the record of who asked and who decided outlives whatever becomes of the key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE transfers ADD COLUMN requested_by uuid;
    ALTER TABLE transfers ADD COLUMN decided_by uuid;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE transfers DROP COLUMN decided_by;
    ALTER TABLE transfers DROP COLUMN requested_by;
  `);
}
