import { Knex } from 'knex';

/** A wallet whose chain activity Keel records: a master wallet's own address or a deposit address. */
export interface WatchedWallet {
  kind: 'master' | 'address';
  /** The master wallet id or the address id. */
  id: string;
  organizationId: string;
  masterWalletId: string;
  name: string | null;
  /** Checksummed. */
  walletAddress: string;
}

/**
 * The chains whose deposits to one master wallet and its addresses Keel records now: those it is
 * enabled on with monitoring on, none while the wallet is deactivated (the condition of WatchedWallets.on).
 * In a transaction, `hold` first takes the wallet's row (as deriving an address does) and keeps it to
 * the commit: turning monitoring off, dropping a chain and deactivating the wallet take it first too,
 * so the answer stays true for what the transaction opens on it.
 */
export async function watchedChainIds(db: Knex | Knex.Transaction, masterWalletId: string, hold = false): Promise<string[]> {
  if (hold) await db('master_wallets').where({ id: masterWalletId }).forNoKeyUpdate().first('id');
  const rows: { blockchainId: string }[] = await db('master_wallet_chains as c')
    .join('master_wallets as mw', 'mw.id', 'c.master_wallet_id')
    .where({ 'c.master_wallet_id': masterWalletId, 'c.monitoring_enabled': true, 'mw.is_active': true })
    .orderBy('c.created_at')
    .select('c.blockchain_id');
  return rows.map((r) => r.blockchainId);
}

/** The deposit addresses of a chain that are still in use whatever their state (a sweep from one on its way). */
export type AddressesInUse = (blockchainId: string) => Promise<string[]>;

/**
 * The wallets monitored on one chain: active master wallets and deposit addresses whose master
 * wallet is enabled there with monitoring on, the addresses active or still in use (a deactivated
 * address being swept receives the sweep's gas top-up, which must be recorded to its account).
 */
export class WatchedWallets {
  private inUse: AddressesInUse = async () => [];

  constructor(private readonly db: Knex) {}

  /** Set once by the composition root (withdrawals knows which addresses are sending). */
  watchInUse(inUse: AddressesInUse): void {
    this.inUse = inUse;
  }

  async on(blockchainId: string): Promise<Map<string, WatchedWallet>> {
    const inUse = await this.inUse(blockchainId);
    const { rows } = await this.db.raw<{ rows: WatchedWallet[] }>(
      `SELECT 'master' AS kind, mw.id, mw.organization_id AS "organizationId", mw.id AS "masterWalletId", mw.name, mw.wallet_address AS "walletAddress"
         FROM master_wallets mw JOIN master_wallet_chains c ON c.master_wallet_id = mw.id
        WHERE c.blockchain_id = :blockchainId AND c.monitoring_enabled AND mw.is_active
       UNION ALL
       SELECT 'address', a.id, a.organization_id, a.master_wallet_id, a.name, a.address
         FROM addresses a
         JOIN master_wallets mw ON mw.id = a.master_wallet_id
         JOIN master_wallet_chains c ON c.master_wallet_id = a.master_wallet_id
        WHERE c.blockchain_id = :blockchainId AND c.monitoring_enabled AND (a.is_active OR a.id = ANY(CAST(:inUse AS uuid[]))) AND mw.is_active`,
      { blockchainId, inUse },
    );
    return new Map(rows.map((w) => [w.walletAddress.toLowerCase(), w]));
  }
}
