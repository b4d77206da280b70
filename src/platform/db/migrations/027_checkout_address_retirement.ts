import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- When a checkout's address was deactivated after its expiry and the late-payment grace (the
    -- deposit watcher no longer watches it); null while it is watched. The partial index holds only
    -- the checkouts still to retire, so the checkout watcher's look for them stays small however many
    -- ended long ago.
    ALTER TABLE checkouts ADD COLUMN address_retired_at timestamptz;
    CREATE INDEX checkouts_unretired_idx ON checkouts (expires_at) WHERE address_retired_at IS NULL;
    -- The deposit watcher reads a wallet's active addresses at every step: retired ones are skipped
    -- by the index instead of read and filtered.
    CREATE INDEX addresses_active_idx ON addresses (master_wallet_id) WHERE is_active;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS addresses_active_idx;
    DROP INDEX IF EXISTS checkouts_unretired_idx;
    ALTER TABLE checkouts DROP COLUMN IF EXISTS address_retired_at;
  `);
}
