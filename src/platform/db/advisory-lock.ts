import type { Knex } from 'knex';

/**
 * Transaction-scoped advisory locks on named keys, taken in a fixed (sorted) order so that two
 * transactions locking overlapping keys cannot deadlock. Held until the caller's transaction ends:
 * a second transaction locking the same key waits for the first to commit, then reads what it wrote.
 */
export async function lockUntilCommit(trx: Knex.Transaction, keys: string[]): Promise<void> {
  for (const key of [...new Set(keys)].sort()) await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [key]);
}
