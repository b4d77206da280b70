import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { Outbox } from '../../platform/events/outbox';
import { Ids } from '../../platform/ids';
import { PageResult, PageWindow, toPage } from '../../platform/paging';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { formatScaled } from '../../platform/decimal';
import type { ChainService } from '../chains';
import { flaggedDeposit, flaggedDeposits, releaseFlaggedDeposit, type ChainTransferModel } from '../deposits';
import type { SanctionMatch } from './sanctions-screen';

/** An incoming transfer from a sanctioned address, for review. */
export interface FlaggedTransferView {
  /** The chain transfer's id (as in the wallet's transaction history). */
  id: string;
  hash: string;
  logIndex: number;
  blockNumber: string;
  from: string;
  to: string;
  /** Whole units of the asset. */
  amount: string;
  rawValue: string;
  assetId: string;
  symbol: string;
  blockchainId: string;
  masterWalletId: string;
  addressId: string | null;
  /** CONFIRMED, or REVERTED when a reorg took it back. */
  status: string;
  flaggedAt: Date;
  matches: SanctionMatch[];
  /** Set once an admin released the hold; null while it holds. */
  releasedAt: Date | null;
  /** The API key that released it. */
  releasedBy: string | null;
  releaseNote: string | null;
}

export interface FlaggedTransferFilter extends PageWindow {
  /** true: released only; false: still held only; absent: both. */
  released?: boolean;
}

/**
 * Review of deposits from sanctioned addresses: list them, and (admin) release one, which lifts
 * its address's hold from auto-sweep once no other unreleased flagged deposit remains there.
 * The release is recorded (who, when, why) and announced with *.incoming_transfer_flag_released.
 */
export class FlaggedTransferService {
  constructor(
    private readonly db: Knex,
    private readonly chains: ChainService,
    private readonly outbox: Outbox,
    private readonly uow: UnitOfWork,
  ) {}

  async list(organizationId: string, filter: FlaggedTransferFilter): Promise<PageResult<FlaggedTransferView>> {
    const { rows, total } = await flaggedDeposits(this.db, organizationId, filter);
    return toPage(await this.views(rows), total, filter);
  }

  async get(organizationId: string, id: string): Promise<FlaggedTransferView> {
    return (await this.views([await this.row(this.db, organizationId, id)]))[0];
  }

  async release(organizationId: string, apiKeyId: string, id: string, note: string): Promise<FlaggedTransferView> {
    return this.uow.run('aml.release', async (trx) => {
      const row = await this.row(trx, organizationId, id, true);
      if (row.amlReleasedAt) throw new KeelError('CONFLICT', `The transfer was already released at ${row.amlReleasedAt.toISOString()}`);
      const updated = await releaseFlaggedDeposit(trx, row.id, apiKeyId, note);
      const [view] = await this.views([updated], trx);
      await this.outbox.publish(trx, {
        organizationId,
        type: `${view.addressId ? 'address' : 'master'}.incoming_transfer_flag_released`,
        data: { id: view.id, hash: view.hash, from: view.from, to: view.to, amount: view.amount, asset: { id: view.assetId, symbol: view.symbol }, masterWalletId: view.masterWalletId, addressId: view.addressId, matches: view.matches, releasedAt: view.releasedAt, releasedBy: apiKeyId, note },
      });
      return view;
    });
  }

  /** A flagged incoming transfer of the organisation, else 404 (another organisation's, unflagged or malformed alike). */
  private async row(db: Knex | Knex.Transaction, organizationId: string, id: string, lock = false): Promise<ChainTransferModel> {
    const row = await flaggedDeposit(db, organizationId, Ids.uuid('Flagged transfer', id), lock);
    if (!row) throw KeelError.notFound('Flagged transfer');
    return row;
  }

  private async views(rows: ChainTransferModel[], db: Knex | Knex.Transaction = this.db): Promise<FlaggedTransferView[]> {
    const assets = await this.chains.assetViews([...new Set(rows.map((r) => r.assetId))], db);
    return rows.map((r) => {
      const asset = assets.get(r.assetId)!;
      return {
        id: r.id,
        hash: r.txHash,
        logIndex: r.logIndex,
        blockNumber: String(r.blockNumber),
        from: r.fromAddress,
        to: r.toAddress,
        amount: formatScaled(BigInt(r.rawValue), asset.decimals),
        rawValue: String(r.rawValue),
        assetId: r.assetId,
        symbol: asset.symbol,
        blockchainId: r.blockchainId,
        masterWalletId: r.masterWalletId,
        addressId: r.addressId,
        status: r.status,
        flaggedAt: r.amlFlaggedAt!,
        matches: r.amlMatches ?? [],
        releasedAt: r.amlReleasedAt,
        releasedBy: r.amlReleasedBy,
        releaseNote: r.amlReleaseNote,
      };
    });
  }
}
