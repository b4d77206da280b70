import { ethers } from 'ethers';
import { KeelError } from '../../platform/errors';
import { devChainAccount } from '../../platform/chain/dev-accounts';
import { fundFromFaucet } from '../../platform/chain/faucet';
import { mintTestNft } from '../../platform/chain/test-nfts';
import { isNftStandard } from '../chains';
import type { AssetModel, ChainNetworks, ChainService, SolanaNetwork } from '../chains';
import { address } from '@solana/kit';
import { fundFromSolanaFaucet } from '../../platform/solana-devnet/faucet';
import { exactInDecimals, formatScaled, parseUnits } from '../../platform/decimal';

export interface FaucetInput {
  /** Default: the first EVM dev chain. Keel's sandbox Solana network is named by its id. */
  blockchainId?: string;
  address: string;
  /** An asset id or symbol (e.g. USDC); default the native coin. */
  asset?: string;
  /** Whole units, e.g. "250.5"; for an NFT collection, how many tokens (ERC-721: 1). */
  amount: string;
  /** ERC-1155 test collection: the token id to mint (required). ERC-721: not accepted, the collection mints its next id. */
  tokenId?: string;
}

export interface FaucetResult {
  txHash: string;
  blockchainId: string;
  assetId: string;
  symbol: string;
  to: string;
  amount: string;
  /** The minted token id, for an NFT collection; null otherwise. */
  tokenId: string | null;
}

/** Most a single faucet request sends, in whole units: plenty for testing, not a way to drain it. */
const MAX_FAUCET_AMOUNT = 1_000_000n;

/**
 * Sends dev coins and test tokens from the dev chain's funded account, so the real deposit path can
 * be walked in sandbox. Refused in production and on any chain that is not a Keel dev chain.
 */
export class DevFaucetService {
  constructor(
    private readonly environment: 'sandbox' | 'production',
    private readonly networks: ChainNetworks,
    private readonly chains: ChainService,
  ) {}

  async fund(input: FaucetInput): Promise<FaucetResult> {
    if (this.environment === 'production') throw KeelError.forbidden('The faucet exists only in sandbox');
    const solana = input.blockchainId ? this.networks.solana(input.blockchainId.toLowerCase()) : undefined;
    const network = solana ?? (input.blockchainId ? this.networks.get(input.blockchainId) : this.networks.all().find((n) => n.spec.dev));
    if (!network) throw new KeelError('INVALID_NETWORK', input.blockchainId ? `Unknown blockchain ${input.blockchainId}` : 'No dev chain is running');
    if (!network.spec.dev) throw KeelError.forbidden('The faucet only funds on Keel dev chains');
    // The one branch on the family here: the sandbox networks fund differently (LiteSVM airdrops and mints; Hardhat sends from a funded account).
    if (solana) return this.fundOnSolana(solana, input);
    if (!ethers.isAddress(input.address)) throw new KeelError('INVALID_ADDRESS', 'address is not a valid EVM address', { fields: [{ field: 'address', error: 'INVALID_FIELD' }] });
    const assets = [...(await this.chains.assetsOf(network.blockchainId)), ...(await this.chains.nftCollectionsOf(network.blockchainId))];
    const asset = this.pick(assets, input.asset);
    if (isNftStandard(asset.standard)) return this.mint(network.spec.rpcUrl, network.blockchainId, asset, input);
    const units = this.units(asset, input);
    const { txHash } = await fundFromFaucet(network.spec.rpcUrl, devChainAccount(0).privateKey, {
      to: input.address,
      amount: input.amount,
      token: asset.isNative ? undefined : { address: asset.address, decimals: asset.decimals },
    });
    return { txHash, blockchainId: network.blockchainId, assetId: asset.id, symbol: asset.symbol, to: ethers.getAddress(input.address), amount: formatScaled(units, asset.decimals), tokenId: null };
  }

  /** SOL or a test SPL token from the sandbox Solana network's faucet (its key is published); txHash is the signature. */
  private async fundOnSolana(network: SolanaNetwork, input: FaucetInput): Promise<FaucetResult> {
    if (!network.port.isAddress(input.address)) throw new KeelError('INVALID_ADDRESS', 'address is not a valid Solana address', { fields: [{ field: 'address', error: 'INVALID_FIELD' }] });
    const asset = this.pick(await this.chains.assetsOf(network.blockchainId), input.asset);
    const units = this.units(asset, input);
    const txHash = await fundFromSolanaFaucet(network.spec.rpcUrl, { to: address(input.address), amount: units, ...(asset.isNative ? {} : { mint: { address: address(asset.address), decimals: asset.decimals } }) });
    return { txHash, blockchainId: network.blockchainId, assetId: asset.id, symbol: asset.symbol, to: input.address, amount: formatScaled(units, asset.decimals), tokenId: null };
  }

  /** The asset asked for (an id or a symbol), default the native coin. */
  private pick(assets: AssetModel[], wanted: string | undefined): AssetModel {
    const w = wanted?.trim();
    const asset = w ? assets.find((a) => a.id === w.toLowerCase() || a.symbol.toUpperCase() === w.toUpperCase()) : assets.find((a) => a.isNative);
    if (!asset) throw KeelError.invalidField('asset', `no asset ${w} on this chain`);
    return asset;
  }

  /** A coin's or token's amount in base units, within the faucet's limit. */
  private units(asset: AssetModel, input: FaucetInput): bigint {
    if (input.tokenId !== undefined) throw KeelError.invalidField('tokenId', 'only an NFT collection takes a token id');
    const units = parseUnits(input.amount, asset.decimals);
    if (units === null) throw KeelError.invalidField('amount', exactInDecimals(asset.decimals, { of: asset.symbol }));
    if (units <= 0n || units > MAX_FAUCET_AMOUNT * 10n ** BigInt(asset.decimals)) throw KeelError.invalidField('amount', `must be above 0 and at most ${MAX_FAUCET_AMOUNT}`);
    return units;
  }

  /** A test collection mints: ERC-721 its next id (amount 1), ERC-1155 `amount` of the id asked for. */
  private async mint(rpcUrl: string, blockchainId: string, asset: AssetModel, input: FaucetInput): Promise<FaucetResult> {
    const erc721 = asset.standard === 'ERC721';
    const amount = /^[1-9][0-9]{0,6}$/.test(input.amount) ? BigInt(input.amount) : null;
    if (amount === null || amount > MAX_FAUCET_AMOUNT) throw KeelError.invalidField('amount', `must be a whole number of tokens from 1 to ${MAX_FAUCET_AMOUNT}`);
    if (erc721 && amount !== 1n) throw KeelError.invalidField('amount', 'an ERC-721 mint is one token: amount must be "1"');
    if (erc721 && input.tokenId !== undefined) throw KeelError.invalidField('tokenId', 'an ERC-721 test collection mints its next id; leave tokenId out');
    if (!erc721 && (input.tokenId === undefined || !/^[0-9]{1,77}$/.test(input.tokenId))) throw KeelError.invalidField('tokenId', 'an ERC-1155 mint needs the token id, a decimal integer');
    const minted = await mintTestNft(rpcUrl, devChainAccount(0).privateKey, { to: input.address, collection: asset, tokenId: erc721 ? undefined : BigInt(input.tokenId!), amount });
    return { txHash: minted.txHash, blockchainId, assetId: asset.id, symbol: asset.symbol, to: ethers.getAddress(input.address), amount: minted.amount.toString(), tokenId: minted.tokenId.toString() };
  }
}
