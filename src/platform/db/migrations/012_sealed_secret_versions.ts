import { Knex } from 'knex';
import type { MigrationContext } from './context';

/**
 * Webhook signing secrets move from plain text to `sealed_secret` (SecretBox, bound to the
 * subscription id, under the current KEEL_MASTER_KEY); the plain-text column is dropped.
 */
export function sealWebhookSecrets(context: MigrationContext): Knex.Migration {
  return {
    async up(knex) {
      await knex.raw('ALTER TABLE webhook_secrets ADD COLUMN sealed_secret text');
      const rows: { id: string; subscriptionId: string; secret: string }[] = await knex('webhook_secrets').select('id', 'subscriptionId', 'secret');
      if (rows.length && !context.secretBox) throw new Error('012_sealed_secret_versions: sealing existing webhook secrets needs KEEL_MASTER_KEY');
      for (const row of rows) {
        await knex('webhook_secrets').where({ id: row.id }).update({ sealedSecret: context.secretBox!.seal(row.secret, row.subscriptionId) });
      }
      await knex.raw('ALTER TABLE webhook_secrets DROP COLUMN secret, ALTER COLUMN sealed_secret SET NOT NULL');
    },
    async down() {
      throw new Error('012_sealed_secret_versions cannot be undone: the plain-text secrets are gone');
    },
  };
}
