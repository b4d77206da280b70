import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import type { AssetView, ChainService, ChainNetworks } from '../chains';
import { isNftStandard } from '../chains';
import type { AddressService } from '../wallets';
import { MasterWalletService, parseMasterWalletId } from '../wallets';
import type { TransferScope } from './chain-transfer-history.service';

/** One NFT a wallet address holds: the collection (an asset of standard ERC721 or ERC1155), the token id and how many. */
export interface NftHoldingView {
  asset: AssetView;
  blockchainId: string;
  /** ERC721 or ERC1155. */
  standard: string;
  /** Decimal string. */
  tokenId: string;
  /** How many of the id the address holds (ERC-721: always "1"). */
  amount: string;
}

/**
 * The NFTs a master wallet's own address, or one deposit address, holds: every (collection, token
 * id) Keel has recorded moving to or from it, read again from the chain (ownerOf / balanceOf), so
 * what left it by any path is gone and what is listed is held now. An NFT that reached the address
 * before Keel watched it is not known, hence not listed.
 */
export class NftHoldingsService {
  constructor(
    private readonly db: Knex,
    private readonly masterWallets: MasterWalletService,
    private readonly addresses: AddressService,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
  ) {}

  async list(organizationId: string, scope: TransferScope, filter: { blockchainId?: string } = {}): Promise<NftHoldingView[]> {
    const blockchainId = Ids.filter('blockchainId', filter.blockchainId);
    // The one branch on the family here: NFT collections (ERC-721 / ERC-1155) are EVM-only (issue 35).
    this.networks.refuseOnSolana(blockchainId, 'nfts', 'blockchainId');
    let owner: string;
    let where: Record<string, unknown>;
    if ('masterWalletId' in scope) {
      const wallet = await this.masterWallets.row(organizationId, parseMasterWalletId(scope.masterWalletId));
      owner = wallet.walletAddress;
      where = { masterWalletId: wallet.id, addressId: null };
    } else {
      const address = await this.addresses.row(organizationId, scope.addressId);
      owner = address.address;
      where = { addressId: address.id };
    }
    const seen: { blockchainId: string; assetId: string; tokenId: string }[] = await this.db('chain_transfers')
      .where({ organizationId, ...where, status: 'CONFIRMED' })
      .whereNotNull('tokenId')
      .modify((q) => (blockchainId ? q.where({ blockchainId }) : q))
      .distinct('blockchainId', 'assetId', this.db.raw('token_id::text as token_id'));
    seen.sort((a, b) => a.blockchainId.localeCompare(b.blockchainId) || a.assetId.localeCompare(b.assetId) || (BigInt(a.tokenId) < BigInt(b.tokenId) ? -1 : 1));
    const assets = await this.chains.assetViews(seen.map((s) => s.assetId));
    const held = await Promise.all(
      seen.map(async (s): Promise<NftHoldingView | null> => {
        const asset = assets.get(s.assetId);
        const network = this.networks.get(s.blockchainId);
        if (!asset || !network || !isNftStandard(asset.standard)) return null;
        try {
          const amount = await network.port.balance(owner, { kind: 'nft', address: asset.address, standard: asset.standard, tokenId: BigInt(s.tokenId) });
          return amount > 0n ? { asset, blockchainId: s.blockchainId, standard: asset.standard, tokenId: s.tokenId, amount: amount.toString() } : null;
        } catch {
          throw new KeelError('UPSTREAM_ERROR', `Could not read NFT balances from ${asset.blockchain.name}'s node`);
        }
      }),
    );
    return held.filter((h): h is NftHoldingView => h !== null);
  }
}
