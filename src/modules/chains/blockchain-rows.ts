import type { Knex } from 'knex';
import type { ChainFamily } from '../../platform/chain-port/chain-port';

/** The confirmations each of these blockchains requires, by id, in the caller's transaction: the blockchains table is this module's. */
export async function chainConfirmations(trx: Knex | Knex.Transaction, blockchainIds: string[]): Promise<Map<string, number>> {
  const rows: { id: string; confirmations: number }[] = await trx('blockchains').whereIn('id', [...new Set(blockchainIds)]).select('id', 'confirmations');
  return new Map(rows.map((r) => [r.id, Number(r.confirmations)]));
}

/** The chain family of each of these blockchains, by id, in the caller's transaction. */
export async function chainFamilies(trx: Knex | Knex.Transaction, blockchainIds: string[]): Promise<Map<string, ChainFamily>> {
  const rows: { id: string; family: ChainFamily }[] = await trx('blockchains').whereIn('id', [...new Set(blockchainIds)]).select('id', 'family');
  return new Map(rows.map((r) => [r.id, r.family]));
}

/** The genesis block hash recorded for a blockchain (null: none yet), read in `db`; `forUpdate` locks the chain's row for the caller's transaction. */
export async function recordedGenesisHash(db: Knex | Knex.Transaction, blockchainId: string, forUpdate = false): Promise<string | null> {
  const chain = forUpdate ? await db('blockchains').where({ id: blockchainId }).forUpdate().first() : await db('blockchains').where({ id: blockchainId }).first();
  return chain?.genesisHash ?? null;
}

/** Records the genesis block hash of the chain a blockchain now answers from. */
export async function recordGenesisHash(db: Knex | Knex.Transaction, blockchainId: string, genesisHash: string): Promise<void> {
  await db('blockchains').where({ id: blockchainId }).update({ genesisHash });
}

/** The ids of a blockchain's assets. */
export async function assetIdsOfChain(db: Knex | Knex.Transaction, blockchainId: string): Promise<string[]> {
  return db('assets').where({ blockchainId }).pluck('id');
}
