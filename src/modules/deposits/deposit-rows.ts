import type { Knex } from 'knex';
import { ChainTransferModel } from './chain-transfer.model';

/** A recorded chain transfer by id, in the caller's transaction, or undefined: the chain_transfers table is this module's. */
export async function chainTransferById(trx: Knex | Knex.Transaction, id: string): Promise<ChainTransferModel | undefined> {
  return ChainTransferModel.query(trx).findById(id);
}
