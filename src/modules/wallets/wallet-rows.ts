import type { Knex } from 'knex';
import type { MasterWalletModel } from './wallet.model';

/** A master wallet's id, name and address as events name it, in the caller's transaction (deleted ones too): the master_wallets table is this module's. */
export async function masterWalletLabel(trx: Knex | Knex.Transaction, id: string): Promise<Pick<MasterWalletModel, 'id' | 'name' | 'walletAddress'>> {
  return trx('master_wallets').where({ id }).first('id', 'name', 'walletAddress');
}
