import type { Knex } from 'knex';

/**
 * Whether a deposit address holds an incoming transfer from a sanctioned address that no admin has
 * released: then nothing may leave it automatically (auto-sweep; settlement rules at merge).
 */
export async function heldByAml(db: Knex | Knex.Transaction, addressId: string): Promise<boolean> {
  const row = await db('chain_transfers').where({ addressId, direction: 'incoming', status: 'CONFIRMED' }).whereNotNull('amlFlaggedAt').whereNull('amlReleasedAt').first('id');
  return !!row;
}
