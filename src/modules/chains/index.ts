/**
 * The chains module's face: what other modules may use of it. The chain registry (blockchains and assets) and each chain's JSON-RPC providers.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { ChainNetworks } from './chain-networks';
import type { ChainService } from './chain.service';

export { ChainNetworks, jsonRpcProvider } from './chain-networks';
export { SOL_DECIMALS } from './chain-config';
export type { ChainNetwork, SolanaNetwork } from './chain-networks';
// Solana beside EVM (issue 35): what stays EVM-only, refused on Solana with INVALID_NETWORK.
export { EVM_ONLY_FEATURES, refuseUnlessEvm } from './evm-only';
export type { EvmOnlyFeature } from './evm-only';
export { ChainService, blockchainView } from './chain.service';
export type { AssetView, BlockchainView } from './chain.service';

export { assetRows, assetIdsOnChain } from './asset-queries';
export { assetSymbol, assetsById, assetsOfChain } from './asset-rows';
export { assetIdsOfChain, chainConfirmations, chainFamilies, recordGenesisHash, recordedGenesisHash } from './blockchain-rows';

// The row shapes, for types only: other modules read the registry through ChainService and the functions above.
export type { AssetModel, BlockchainModel } from './chain.model';

export { createChainsServices } from './chains-services';

/** The chains module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface ChainsServices {
  chains: ChainService;
  /** The chains of this deployment and their JSON-RPC providers. */
  networks: ChainNetworks;
}
// NFT collections: which assets are NFTs (what an address holds of one: ChainPort.balance, kind 'nft').
export { isNftStandard, nftCategory } from './nft-standards';
export type { NftStandard } from './nft-standards';
