import { Knex } from 'knex';

/** A ledger wallet (a master wallet's own address or a deposit address) and its address on chain. */
export interface WalletAccount {
  walletId: string;
  organizationId: string;
  masterWalletId: string;
  addressId: string | null;
  address: string;
}

/** The on-chain accounts of ledger wallet ids (unknown ids are left out), in the caller's connection or transaction: the addresses and master_wallets tables are this module's. */
export async function walletAccounts(db: Knex | Knex.Transaction, walletIds: readonly string[]): Promise<Map<string, WalletAccount>> {
  const ids = [...new Set(walletIds)];
  if (!ids.length) return new Map();
  const { rows } = await db.raw(
    `SELECT a.id AS "walletId", a.organization_id AS "organizationId", a.master_wallet_id AS "masterWalletId", a.id AS "addressId", a.address
       FROM addresses a WHERE a.id = ANY(?::uuid[])
     UNION ALL
     SELECT w.id, w.organization_id, w.id, NULL, w.wallet_address FROM master_wallets w WHERE w.id = ANY(?::uuid[])`,
    [ids, ids],
  );
  return new Map((rows as WalletAccount[]).map((r) => [r.walletId, r]));
}
