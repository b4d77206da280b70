import type { Knex } from 'knex';
import { ChainTransferModel } from './chain-transfer.model';

/** A recorded chain transfer by id, in the caller's transaction, or undefined: the chain_transfers table is this module's. */
export async function chainTransferById(trx: Knex | Knex.Transaction, id: string): Promise<ChainTransferModel | undefined> {
  return ChainTransferModel.query(trx).findById(id);
}

/** The block times of recorded chain transfers, by id (in the caller's transaction, which may have just recorded them). */
export async function blockTimesOf(db: Knex | Knex.Transaction, ids: string[]): Promise<Map<string, Date>> {
  if (!ids.length) return new Map();
  const rows = await ChainTransferModel.query(db).whereIn('id', ids).select('id', 'blockTimestamp');
  return new Map(rows.map((r) => [r.id, r.blockTimestamp]));
}

/** The number of the newest block the deposit watcher has scanned on a chain, or undefined before its first scan: the chain_cursors table is this module's. */
export async function scannedBlockNumber(db: Knex | Knex.Transaction, blockchainId: string): Promise<number | undefined> {
  const cursor = await db('chain_cursors').where({ blockchainId }).first('blockNumber');
  return cursor ? Number(cursor.blockNumber) : undefined;
}

/** One column (the block hash it was seen in, or its transaction hash) of each of these recorded chain transfers, by id; ids not recorded are absent. */
export async function chainTransferColumn(db: Knex | Knex.Transaction, ids: string[], column: 'blockHash' | 'txHash'): Promise<Map<string, string>> {
  const rows: { id: string; value: string }[] = ids.length ? await db('chain_transfers').whereIn('id', ids).select('id', `${column} as value`) : [];
  return new Map(rows.map((r) => [r.id, r.value]));
}
