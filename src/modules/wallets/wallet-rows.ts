import type { Knex } from 'knex';
import type { MasterWalletModel } from './wallet.model';

/** A master wallet's id, name and address as events name it, in the caller's transaction (deleted ones too): the master_wallets table is this module's. */
export async function masterWalletLabel(trx: Knex | Knex.Transaction, id: string): Promise<Pick<MasterWalletModel, 'id' | 'name' | 'walletAddress'>> {
  return trx('master_wallets').where({ id }).first('id', 'name', 'walletAddress');
}

/**
 * The oldest active master wallet of the organisation enabled on this blockchain (only `walletId`
 * when given), or undefined.
 */
export async function activeWalletOnChain(db: Knex | Knex.Transaction, organizationId: string, blockchainId: string, walletId?: string): Promise<string | undefined> {
  const q = db('master_wallets as w')
    .join('master_wallet_chains as c', 'c.masterWalletId', 'w.id')
    .where({ 'w.organizationId': organizationId, 'w.isActive': true, 'c.blockchainId': blockchainId })
    .orderBy([{ column: 'w.createdAt' }, { column: 'w.id' }])
    .first('w.id');
  const found = await (walletId === undefined ? q : q.where('w.id', walletId));
  return found?.id;
}

/**
 * The Keel wallet at this address on the chain, whatever its state: a master wallet's own address or
 * a deposit address (`walletId` is the address's id then), as the ledger keys its accounts.
 * `address` as Keel stores it (checksummed on EVM chains).
 */
export async function walletAtAddress(db: Knex | Knex.Transaction, blockchainId: string, address: string): Promise<{ organizationId: string; walletId: string } | undefined> {
  const { rows } = await db.raw<{ rows: { organizationId: string; walletId: string }[] }>(
    `SELECT mw.organization_id AS "organizationId", mw.id AS "walletId"
       FROM master_wallets mw JOIN master_wallet_chains c ON c.master_wallet_id = mw.id
      WHERE mw.wallet_address = :address AND c.blockchain_id = :blockchainId
     UNION ALL
     SELECT a.organization_id, a.id
       FROM addresses a JOIN master_wallet_chains c ON c.master_wallet_id = a.master_wallet_id
      WHERE a.address = :address AND c.blockchain_id = :blockchainId
     LIMIT 1`,
    { address, blockchainId },
  );
  return rows[0];
}

/** Deactivates these deposit addresses (those still active), in the caller's transaction: the addresses table is this module's. */
export async function deactivateAddresses(trx: Knex | Knex.Transaction, addressIds: string[]): Promise<void> {
  await trx('addresses').whereIn('id', addressIds).where('isActive', true).update({ isActive: false, updatedAt: trx.fn.now() });
}
