import { Knex } from 'knex';

/**
 * The deposit watcher asks each step which deposit addresses of its chain have a transfer from them
 * not final (withdrawals' addressesSendingOn: a deactivated address being swept stays watched): an
 * index of the few open transfers from addresses.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX transfers_open_from_address_idx ON transfers (blockchain_id, address_id) WHERE address_id IS NOT NULL AND status IN ('PENDING_APPROVAL', 'QUEUED', 'SUBMITTED')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX transfers_open_from_address_idx');
}
