import { Knex } from 'knex';

/**
 * keel_assert(ok, message): raises SQLSTATE KL001 with the message unless ok. A composed
 * statement (src/platform/db/one-statement.ts) ends with it to fail as a whole when one of its
 * writes did not touch the rows it had to, such as a market whose sequence moved under it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION keel_assert(ok boolean, message text) RETURNS boolean
      LANGUAGE plpgsql AS $$
      BEGIN
        IF ok IS NOT TRUE THEN
          RAISE EXCEPTION USING ERRCODE = 'KL001', MESSAGE = message;
        END IF;
        RETURN true;
      END
      $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS keel_assert(boolean, text)');
}
