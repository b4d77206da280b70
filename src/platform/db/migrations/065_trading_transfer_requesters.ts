import { Knex } from 'knex';

/**
 * Four eyes on a withdrawal from trading held for approval, as on a held transfer (migration 061,
 * withdrawals/four-eyes.ts): the API key that asked for it (an access token counts as the key that
 * issued it) and the one that approved or rejected it. The key that asked may not approve. Null
 * requested_by: a deposit, or a withdrawal recorded before this column, which any approver decides.
 * No foreign key: the record of who asked and who decided outlives whatever becomes of the key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE trading_transfers ADD COLUMN requested_by uuid;
    ALTER TABLE trading_transfers ADD COLUMN decided_by uuid;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE trading_transfers DROP COLUMN decided_by;
    ALTER TABLE trading_transfers DROP COLUMN requested_by;
  `);
}
