import type { Knex } from 'knex';

/** The confirmations each of these blockchains requires, by id, in the caller's transaction: the blockchains table is this module's. */
export async function chainConfirmations(trx: Knex | Knex.Transaction, blockchainIds: string[]): Promise<Map<string, number>> {
  const rows: { id: string; confirmations: number }[] = await trx('blockchains').whereIn('id', [...new Set(blockchainIds)]).select('id', 'confirmations');
  return new Map(rows.map((r) => [r.id, Number(r.confirmations)]));
}
