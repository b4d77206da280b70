import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { AssetModel, BlockchainModel } from './chain.model';
import { fetchPage } from '../../platform/db/fetch-page';
import { NFT_STANDARDS } from './nft-standards';

/** A chain of the registry, as services and the API show it. */
export interface BlockchainView {
  id: string;
  name: string;
  slug: string;
  /** The native coin. */
  symbol: string;
  isActive: boolean;
  isEvmCompatible: boolean;
  /** confirmations (blocks before a deposit counts), explorerUrl. */
  configurations: Record<string, unknown> | null;
  /** The EVM chain id; null on Solana (a cluster has none: `network` names it). */
  chainId: number | null;
  logoUrl: string;
  tokenStandard: string;
  /** mainnet, a testnet name, or devnet for Keel's sandbox chains. */
  network: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A native coin or token of the registry, with its chain. */
export interface AssetView {
  id: string;
  name: string;
  symbol: string;
  decimals: number;
  /** The token contract (Solana: the mint); the zero address for the native coin (Solana: the System Program's, 111…1). */
  address: string;
  /** ERC20, SPL, native, or an NFT collection's ERC721 / ERC1155 (decimals 0). */
  standard: string;
  logoUrl: string;
  isActive: boolean;
  isNative: boolean;
  network: string;
  configurations: Record<string, unknown> | null;
  blockchain: BlockchainView;
  blockchainId: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface BlockchainFilter {
  isActive?: boolean;
}

export interface AssetFilter {
  blockchainId?: string;
  symbol?: string;
  isNative?: boolean;
}

export function blockchainView(b: BlockchainModel): BlockchainView {
  return {
    id: b.id,
    name: b.name,
    slug: b.slug,
    symbol: b.symbol,
    isActive: b.isActive,
    isEvmCompatible: b.isEvmCompatible,
    configurations: b.configurations,
    chainId: b.chainId === null ? null : Number(b.chainId),
    logoUrl: b.logoUrl,
    tokenStandard: b.tokenStandard,
    network: b.network,
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
  };
}

export function assetView(a: AssetModel, chain: BlockchainModel): AssetView {
  return {
    id: a.id,
    name: a.name,
    symbol: a.symbol,
    decimals: a.decimals,
    address: a.address,
    standard: a.standard,
    logoUrl: a.logoUrl,
    isActive: a.isActive,
    isNative: a.isNative,
    network: a.network,
    configurations: a.configurations,
    blockchain: blockchainView(chain),
    blockchainId: a.blockchainId,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

/** The registry of chains and assets: public reference data, the same for every organisation. */
export class ChainService {
  constructor(private readonly db: Knex) {}

  async listBlockchains(args: PageWindow & BlockchainFilter): Promise<PageResult<BlockchainView>> {
    const q = BlockchainModel.query(this.db).modify((b) => (args.isActive === undefined ? b : b.where('isActive', args.isActive)));
    const { rows, total } = await fetchPage<BlockchainModel>(q, args, [{ column: 'chainId' }, { column: 'slug' }]);
    return toPage(rows.map(blockchainView), total, args);
  }

  async blockchainRow(id: string): Promise<BlockchainModel> {
    const row = await BlockchainModel.query(this.db).findById(Ids.uuid('Blockchain', id));
    if (!row) throw KeelError.notFound('Blockchain');
    return row;
  }

  /** The blockchain with this id, or undefined (a malformed id too). */
  async findBlockchain(id: string, db: Knex | Knex.Transaction = this.db): Promise<BlockchainModel | undefined> {
    return Ids.isUuid(id) ? BlockchainModel.query(db).findById(id) : undefined;
  }

  /** The ids of the active EVM chains (the only kind Keel holds keys for). */
  async activeEvmChainIds(db: Knex | Knex.Transaction = this.db): Promise<string[]> {
    return (await BlockchainModel.query(db).where({ isActive: true, isEvmCompatible: true }).select('id')).map((c) => c.id);
  }

  /** The blockchains with these ids, as views, by id. */
  async blockchainViews(ids: string[], db: Knex | Knex.Transaction = this.db): Promise<Map<string, BlockchainView>> {
    const rows = ids.length ? await BlockchainModel.query(db).findByIds([...new Set(ids)]) : [];
    return new Map(rows.map((c) => [c.id, blockchainView(c)]));
  }

  async getBlockchain(id: string): Promise<BlockchainView> {
    return blockchainView(await this.blockchainRow(id));
  }

  async listAssets(args: PageWindow & AssetFilter): Promise<PageResult<AssetView>> {
    const blockchainId = Ids.filter('blockchainId', args.blockchainId || undefined);
    const q = AssetModel.query(this.db).modify((b) => {
      if (blockchainId) b.where('blockchainId', blockchainId);
      if (args.symbol) b.whereRaw('upper(symbol) = upper(?)', [args.symbol]);
      if (args.isNative !== undefined) b.where('isNative', args.isNative);
    });
    const { rows, total } = await fetchPage<AssetModel>(q, args, [{ column: 'blockchainId' }, { column: 'isNative', order: 'desc' }, { column: 'symbol' }]);
    return toPage(await this.withChains(rows), total, args);
  }

  async getAsset(id: string): Promise<AssetView> {
    const row = await AssetModel.query(this.db).findById(Ids.uuid('Asset', id));
    if (!row) throw KeelError.notFound('Asset');
    return (await this.withChains([row]))[0];
  }

  async assetRow(id: string): Promise<AssetModel | undefined> {
    return AssetModel.query(this.db).findById(id);
  }

  /** `db`: the caller's transaction, when it holds one (its connection, not a second one from the pool). */
  async assetViews(ids: string[], db: Knex | Knex.Transaction = this.db): Promise<Map<string, AssetView>> {
    const rows = ids.length ? await AssetModel.query(db).findByIds([...new Set(ids)]) : [];
    return new Map((await this.withChains(rows, db)).map((a) => [a.id, a]));
  }

  /** The chain's active native coin and fungible tokens (NFT collections are nftCollectionsOf). */
  async assetsOf(blockchainId: string, db: Knex | Knex.Transaction = this.db): Promise<AssetModel[]> {
    return AssetModel.query(db).where({ blockchainId, isActive: true }).whereNotIn('standard', NFT_STANDARDS).orderBy([{ column: 'isNative', order: 'desc' }, { column: 'symbol' }]);
  }

  /** The chain's active NFT collections (ERC721, ERC1155). */
  async nftCollectionsOf(blockchainId: string, db: Knex | Knex.Transaction = this.db): Promise<AssetModel[]> {
    return AssetModel.query(db).where({ blockchainId, isActive: true }).whereIn('standard', NFT_STANDARDS).orderBy('symbol');
  }

  /** The active assets of these chains. */
  /** The active fungible assets (coins and tokens, not NFT collections) of the given chains. */
  async activeAssetsOn(blockchainIds: string[], db: Knex | Knex.Transaction = this.db): Promise<AssetModel[]> {
    return AssetModel.query(db).whereIn('blockchainId', blockchainIds).where({ isActive: true }).whereNotIn('standard', NFT_STANDARDS);
  }

  async withChains(assets: AssetModel[], db: Knex | Knex.Transaction = this.db): Promise<AssetView[]> {
    const ids = [...new Set(assets.map((a) => a.blockchainId))];
    const chains = new Map((await BlockchainModel.query(db).findByIds(ids)).map((c) => [c.id, c]));
    return assets.map((a) => assetView(a, chains.get(a.blockchainId)!));
  }
}
