import type { Knex } from 'knex';

/** Confirmed incoming transfers from a sanctioned address that no admin has released yet. */
export function unreleasedFlags(db: Knex | Knex.Transaction): Knex.QueryBuilder {
  return db('chain_transfers').where({ direction: 'incoming', status: 'CONFIRMED' }).whereNotNull('amlFlaggedAt').whereNull('amlReleasedAt');
}

/**
 * Whether a deposit address holds an incoming transfer from a sanctioned address that no admin has
 * released: then nothing may leave it automatically (auto-sweep; settlement rules at merge).
 */
export async function heldByAml(db: Knex | Knex.Transaction, addressId: string): Promise<boolean> {
  return !!(await unreleasedFlags(db).where({ addressId }).first('id'));
}
