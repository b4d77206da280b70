import { Knex } from 'knex';

/**
 * Each statement that records events notifies `keel_outbox` (PostgreSQL delivers it when, and only
 * if, the transaction commits, one per transaction however many events it recorded), so the outbox
 * relay moves them at once instead of looking every 50 ms. A trigger rather than a NOTIFY in the
 * publishing code: every writer of outbox_events is covered, a statement built by hand included.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION keel_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('keel_outbox', '');
      RETURN NULL;
    END $$;
    CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events FOR EACH STATEMENT EXECUTE FUNCTION keel_outbox_notify();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER outbox_events_notify ON outbox_events;
    DROP FUNCTION keel_outbox_notify();
  `);
}
