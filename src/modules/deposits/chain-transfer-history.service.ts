import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import type { ChainService, AssetView } from '../chains';
import type { AddressService } from '../wallets';
import { MasterWalletService, parseMasterWalletId } from '../wallets';
import { ChainTransferModel, TransferCategory } from './chain-transfer.model';
import { formatScaled } from '../../platform/decimal';
import { DateRange, withinDateRange } from '../../platform/db/date-range';

export type TransferScope = { masterWalletId: string } | { addressId: string };

/** Which chain transfers to list: cursor-paged by block, newest first unless sort is ASC. */
export interface ChainTransferFilter extends DateRange {
  direction?: 'incoming' | 'outgoing';
  sort: 'ASC' | 'DESC';
  cursor?: string;
  limit: number;
  assetId?: string;
  blockchainId?: string;
  status?: 'CONFIRMED' | 'REVERTED';
  /** Only this category (erc721 and erc1155 are the NFT transfers). */
  category?: TransferCategory;
}

/** A sanctions list entry a flagged transfer's sender matched (chain_transfers.amlMatches). */
export interface SanctionListEntry {
  list: string;
  address: string;
}

/** A chain transfer seen from the watched wallet it moved to or from. */
export interface ChainTransferView {
  id: string;
  category: string;
  direction: string;
  status: string;
  blockNum: string;
  hash: string;
  logIndex: number;
  from: string;
  to: string;
  symbol: string;
  value: number;
  asset: AssetView;
  rawContract: { value: string; address: string; decimal: string };
  /** An NFT transfer's token id (decimal string; rawContract.value is how many); null otherwise. */
  tokenId: string | null;
  timestamp: string;
  blockchainId: string;
  masterWalletId: string;
  addressId: string | null;
  /** The AML screening of an incoming transfer's sender: null when not flagged. */
  aml: { flaggedAt: Date; matches: SanctionListEntry[]; releasedAt: Date | null } | null;
}

/** The spec's wrapper: `transfer` is the page of chain transfers. */
export interface ChainTransferPage {
  transfer: ChainTransferView[];
  pageInfo: { hasMore: boolean; nextCursor: string | null };
  totalCount: number;
}

/** The recorded transfers of one master wallet (with its addresses) or of one deposit address. */
export class ChainTransferHistoryService {
  constructor(
    private readonly db: Knex,
    private readonly masterWallets: MasterWalletService,
    private readonly addresses: AddressService,
    private readonly chains: ChainService,
  ) {}

  async list(organizationId: string, scope: TransferScope, args: ChainTransferFilter): Promise<ChainTransferPage> {
    scope = 'masterWalletId' in scope ? { masterWalletId: parseMasterWalletId(scope.masterWalletId) } : { addressId: Ids.uuid('Address', scope.addressId) };
    const assetId = Ids.filter('assetId', args.assetId);
    const blockchainId = Ids.filter('blockchainId', args.blockchainId);
    if ('masterWalletId' in scope) await this.masterWallets.row(organizationId, scope.masterWalletId);
    else await this.addresses.row(organizationId, scope.addressId);
    const filtered = ChainTransferModel.query(this.db)
      .where({ organizationId, ...scope })
      .modify((q) => {
        if (args.direction) q.where({ direction: args.direction });
        if (assetId) q.where({ assetId });
        if (blockchainId) q.where({ blockchainId });
        if (args.status) q.where({ status: args.status });
        if (args.category) q.where({ category: args.category });
        // A chain transfer is created when its block is: the range is on the block's time.
        withinDateRange(q, args, 'blockTimestamp');
      });
    const after = args.cursor ? decodeCursor(args.cursor) : undefined;
    const op = args.sort === 'ASC' ? '>' : '<';
    const order = args.sort === 'ASC' ? 'asc' : 'desc';
    const rows = await filtered
      .clone()
      .modify((q) => {
        if (after) q.whereRaw(`(block_number, id) ${op} (?, ?)`, [after.blockNumber, after.id]);
      })
      .orderBy([
        { column: 'blockNumber', order: order },
        { column: 'id', order: order },
      ])
      .limit(args.limit + 1);
    const hasMore = rows.length > args.limit;
    // A first page that holds the whole list tells its size, in the page's own snapshot; otherwise
    // it is counted after the page (never fewer than the page shows, however fast deposits arrive).
    const total = !after && !hasMore ? rows.length : await filtered.clone().resultSize();
    const page = rows.slice(0, args.limit);
    const assets = await this.chains.assetViews(page.map((r) => r.assetId));
    const last = page[page.length - 1];
    return {
      transfer: page.map((r) => record(r, assets)),
      pageInfo: { hasMore, nextCursor: hasMore && last ? encodeCursor(last) : null },
      totalCount: total,
    };
  }
}

function record(r: ChainTransferModel, assets: Map<string, AssetView>): ChainTransferView {
  const asset = assets.get(r.assetId)!;
  return {
    id: r.id,
    category: r.category,
    direction: r.direction,
    status: r.status,
    blockNum: String(r.blockNumber),
    hash: r.txHash,
    logIndex: r.logIndex,
    from: r.fromAddress,
    to: r.toAddress,
    symbol: asset.symbol,
    value: Number(formatScaled(BigInt(r.rawValue), asset.decimals)),
    asset,
    rawContract: { value: r.rawValue, address: asset.address, decimal: String(asset.decimals) },
    tokenId: r.tokenId,
    timestamp: new Date(r.blockTimestamp).toISOString(),
    blockchainId: r.blockchainId,
    masterWalletId: r.masterWalletId,
    addressId: r.addressId,
    aml: r.amlFlaggedAt ? { flaggedAt: r.amlFlaggedAt, matches: r.amlMatches ?? [], releasedAt: r.amlReleasedAt } : null,
  };
}

const MAX_BIGINT = 2n ** 63n - 1n;

function encodeCursor(r: ChainTransferModel): string {
  return Buffer.from(JSON.stringify([String(r.blockNumber), r.id])).toString('base64url');
}

function decodeCursor(cursor: string): { blockNumber: string; id: string } {
  try {
    const [blockNumber, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    // Within PostgreSQL's bigint and a real UUID: anything else would fail the query (a 500), not the request.
    if (typeof blockNumber === 'string' && /^\d{1,19}$/.test(blockNumber) && BigInt(blockNumber) <= MAX_BIGINT && typeof id === 'string' && Ids.isUuid(id)) return { blockNumber, id };
  } catch {
    // fall through
  }
  throw KeelError.invalidField('cursor', 'is not a cursor this endpoint returned');
}
