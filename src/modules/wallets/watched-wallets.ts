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
 * The wallets monitored on one chain: active master wallets and active deposit addresses whose
 * master wallet is enabled there with monitoring on.
 */
export class WatchedWallets {
  constructor(private readonly db: Knex) {}

  async on(blockchainId: string): Promise<Map<string, WatchedWallet>> {
    const { rows } = await this.db.raw<{ rows: WatchedWallet[] }>(
      `SELECT 'master' AS kind, mw.id, mw.organization_id AS "organizationId", mw.id AS "masterWalletId", mw.name, mw.wallet_address AS "walletAddress"
         FROM master_wallets mw JOIN master_wallet_chains c ON c.master_wallet_id = mw.id
        WHERE c.blockchain_id = :blockchainId AND c.monitoring_enabled AND mw.is_active
       UNION ALL
       SELECT 'address', a.id, a.organization_id, a.master_wallet_id, a.name, a.address
         FROM addresses a
         JOIN master_wallets mw ON mw.id = a.master_wallet_id
         JOIN master_wallet_chains c ON c.master_wallet_id = a.master_wallet_id
        WHERE c.blockchain_id = :blockchainId AND c.monitoring_enabled AND a.is_active AND mw.is_active`,
      { blockchainId },
    );
    return new Map(rows.map((w) => [w.walletAddress.toLowerCase(), w]));
  }
}
