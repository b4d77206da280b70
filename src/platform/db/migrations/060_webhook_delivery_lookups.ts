import { Knex } from 'knex';

/**
 * Two lookups of one subscription's deliveries: whether its log holds a signing event (asked before
 * a non-admin key re-targets, resends or recovers it; the event names are the catalogue's
 * SIGNING_EVENT_NAMES, written out as the query writes them), and its FAILED deliveries in id order
 * (recover, a page at a time). Both partial: a subscription's log is never purged.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX webhook_deliveries_signing_idx ON webhook_deliveries (subscription_id)
      WHERE type IN ('address.signed_success', 'address.signed_failed', 'master.signed_success', 'master.signed_failed')`,
  );
  await knex.raw(`CREATE INDEX webhook_deliveries_failed_idx ON webhook_deliveries (subscription_id, id) WHERE status = 'FAILED'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX webhook_deliveries_signing_idx, webhook_deliveries_failed_idx');
}
