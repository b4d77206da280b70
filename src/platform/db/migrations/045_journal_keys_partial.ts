import { Knex } from 'knex';

/**
 * The journal's idempotency key is unique only where it is set (issue 37): the order book's group
 * commit journals its moves without a key (the group is made once by its fencing token and market
 * sequence), about 2.6 entries an order, and a full unique index took an entry for each of their
 * NULLs, which no lookup reads. Keyed entries (credits, debits) are still refused twice; their
 * ON CONFLICT names the index's predicate.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_idempotency_key_key;
    CREATE UNIQUE INDEX ledger_entries_idempotency_key_key ON ledger_entries (idempotency_key) WHERE idempotency_key IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX ledger_entries_idempotency_key_key;
    ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_idempotency_key_key UNIQUE (idempotency_key);
  `);
}
