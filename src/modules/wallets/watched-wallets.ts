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
 * enabled on with monitoring on, none while the wallet is deactivated (the condition of WatchedWallets.on
 * for everyone's deposits; a Keel line still on its way to or from the wallet keeps it watched beyond that).
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

/** Blocks of a chain past the deposit watcher's cursor (`after`), up to the highest its scan may reach. */
export interface BlockWindow {
  after: number;
  through: number;
}

/** What Keel's own transfers on a chain still move: the wallets (master wallet or address ids) they leave from, and the addresses they pay, by organisation. */
export interface WalletsInUse {
  walletIds: string[];
  recipients: { organizationId: string; address: string }[];
}

/** What Keel's lines on a chain still move (withdrawals knows): open ones, and with `blocks` those mined there. */
export type LinesInUse = (blockchainId: string, blocks?: BlockWindow) => Promise<WalletsInUse>;

/**
 * The wallets monitored on one chain: active master wallets and deposit addresses whose master
 * wallet is enabled there with monitoring on, the addresses active; and, whatever their state or
 * their master wallet's, every wallet a Keel line still moves money to or from (LinesInUse): what
 * such a line brings to a deactivated address or to a master wallet deactivated or with monitoring
 * off since it was queued (a sweep's gas top-up, an address's transfer to its master wallet) is
 * recorded and credited to its account, as the line's sender was debited for it.
 */
export class WatchedWallets {
  private inUse: LinesInUse = async () => ({ walletIds: [], recipients: [] });

  constructor(private readonly db: Knex) {}

  /** Set once by the composition root (withdrawals knows which lines are on their way). */
  watchInUse(inUse: LinesInUse): void {
    this.inUse = inUse;
  }

  /**
   * The wallets to record on one chain, by lower-cased address. `blocks`: the blocks a scan is about
   * to record, so a line mined there that became final before the scan keeps its wallets watched.
   */
  async on(blockchainId: string, blocks?: BlockWindow): Promise<Map<string, WatchedWallet>> {
    const { walletIds, recipients } = await this.inUse(blockchainId, blocks);
    const { rows } = await this.db.raw<{ rows: WatchedWallet[] }>(
      `WITH received AS (SELECT * FROM unnest(CAST(:orgs AS uuid[]), CAST(:paid AS text[])) AS r(organization_id, address))
       SELECT 'master' AS kind, mw.id, mw.organization_id AS "organizationId", mw.id AS "masterWalletId", mw.name, mw.wallet_address AS "walletAddress"
         FROM master_wallets mw JOIN master_wallet_chains c ON c.master_wallet_id = mw.id
        WHERE c.blockchain_id = :blockchainId AND c.monitoring_enabled AND mw.is_active
       UNION
       SELECT 'master', mw.id, mw.organization_id, mw.id, mw.name, mw.wallet_address FROM master_wallets mw WHERE mw.id = ANY(CAST(:walletIds AS uuid[]))
       UNION
       SELECT 'master', mw.id, mw.organization_id, mw.id, mw.name, mw.wallet_address FROM received r JOIN master_wallets mw ON mw.wallet_address = r.address AND mw.organization_id = r.organization_id
       UNION
       SELECT 'address', a.id, a.organization_id, a.master_wallet_id, a.name, a.address
         FROM addresses a
         JOIN master_wallets mw ON mw.id = a.master_wallet_id
         JOIN master_wallet_chains c ON c.master_wallet_id = a.master_wallet_id
        WHERE c.blockchain_id = :blockchainId AND c.monitoring_enabled AND a.is_active AND mw.is_active
       UNION
       SELECT 'address', a.id, a.organization_id, a.master_wallet_id, a.name, a.address FROM addresses a WHERE a.id = ANY(CAST(:walletIds AS uuid[]))
       UNION
       SELECT 'address', a.id, a.organization_id, a.master_wallet_id, a.name, a.address FROM received r JOIN addresses a ON a.address = r.address AND a.organization_id = r.organization_id`,
      { blockchainId, walletIds, orgs: recipients.map((r) => r.organizationId), paid: recipients.map((r) => r.address) },
    );
    return new Map(rows.map((w) => [w.walletAddress.toLowerCase(), w]));
  }
}
