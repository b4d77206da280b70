import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { formatScaled } from '../../platform/decimal';
import { toPage, PageResult } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { fetchPage } from '../../platform/db/fetch-page';
import type { AssetView, ChainService } from '../chains';
import { feeDecimals } from './transfer-families';
import type { TransferFilter, TransferItemView, TransferView } from './transfer.domain';

/** Reads of transfers and their lines, as the API shows them. */
export class TransferQueries {
  constructor(
    private readonly db: Knex,
    private readonly chains: ChainService,
  ) {}

  async list(organizationId: string, args: TransferFilter): Promise<PageResult<TransferView>> {
    const masterWalletId = Ids.filter('masterWalletId', args.masterWalletId);
    const q = this.db('transfers')
      .where({ organizationId })
      .modify((b) => {
        if (args.status) b.where({ status: args.status });
        if (masterWalletId) b.where({ masterWalletId });
      });
    const { rows, total } = await fetchPage<Record<string, any>>(q, args, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return toPage(await this.views(rows), total, args);
  }

  async get(organizationId: string, id: string, trx: Knex | Knex.Transaction = this.db): Promise<TransferView> {
    id = Ids.uuid('Transfer', id);
    const row = await trx('transfers').where({ id, organizationId }).first();
    if (!row) throw KeelError.notFound('Transfer');
    return (await this.views([row], trx))[0];
  }

  private async views(rows: Record<string, any>[], trx: Knex | Knex.Transaction = this.db): Promise<TransferView[]> {
    if (!rows.length) return [];
    const items: Record<string, any>[] = await trx('transfer_items').whereIn('transferId', rows.map((r) => r.id)).orderBy(['transferId', 'position']);
    const assets = await this.chains.assetViews(items.map((i) => i.assetId), trx);
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      status: r.status,
      masterWalletId: r.masterWalletId,
      addressId: r.addressId,
      blockchainId: r.blockchainId,
      fromAddress: r.fromAddress,
      note: r.note,
      requestedBy: r.requestedBy,
      decidedBy: r.decidedBy,
      decidedAt: r.decidedAt,
      cancelRequestedAt: r.cancelRequestedAt ?? null,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      items: items.filter((i) => i.transferId === r.id).map((i) => itemView(i, assets.get(i.assetId)!)),
    }));
  }
}

function itemView(i: Record<string, any>, asset: AssetView): TransferItemView {
  return {
    id: i.id,
    position: i.position,
    asset,
    recipient: i.recipient,
    amount: formatScaled(BigInt(i.rawAmount), asset.decimals),
    rawAmount: String(i.rawAmount),
    tokenId: i.tokenId === null || i.tokenId === undefined ? null : String(i.tokenId),
    status: i.status,
    txHash: i.txHash,
    replacedTxHashes: i.replacedTxHashes ?? [],
    cancelTxHashes: i.cancelTxHashes ?? [],
    nonce: i.nonce === null ? null : String(i.nonce),
    blockNumber: i.blockNumber === null ? null : String(i.blockNumber),
    gasFee: i.feePaid === null ? null : formatScaled(BigInt(i.feePaid), feeDecimals(asset.blockchain)),
    error: i.error,
    submittedAt: i.submittedAt,
  };
}
