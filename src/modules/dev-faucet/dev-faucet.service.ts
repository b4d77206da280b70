import { ethers } from 'ethers';
import { KeelError } from '../../platform/errors';
import { devChainAccount } from '../../platform/chain/dev-accounts';
import { fundFromFaucet } from '../../platform/chain/faucet';
import type { ChainNetworks, ChainService } from '../chains';
import { formatScaled, parseUnits } from '../../platform/decimal';

export interface FaucetInput {
  /** Default: the first dev chain. */
  blockchainId?: string;
  address: string;
  /** An asset id or symbol (e.g. USDC); default the native coin. */
  asset?: string;
  /** Whole units, e.g. "250.5". */
  amount: string;
}

export interface FaucetResult {
  txHash: string;
  blockchainId: string;
  assetId: string;
  symbol: string;
  to: string;
  amount: string;
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
    const network = input.blockchainId ? this.networks.get(input.blockchainId) : this.networks.all().find((n) => n.spec.dev);
    if (!network) throw new KeelError('INVALID_NETWORK', input.blockchainId ? `Unknown blockchain ${input.blockchainId}` : 'No dev chain is running');
    if (!network.spec.dev) throw KeelError.forbidden('The faucet only funds on Keel dev chains');
    if (!ethers.isAddress(input.address)) throw new KeelError('INVALID_ADDRESS', 'address is not a valid EVM address', { fields: [{ field: 'address', error: 'INVALID_FIELD' }] });
    const assets = await this.chains.assetsOf(network.blockchainId);
    const wanted = input.asset?.trim();
    const asset = wanted ? assets.find((a) => a.id === wanted.toLowerCase() || a.symbol.toUpperCase() === wanted.toUpperCase()) : assets.find((a) => a.isNative);
    if (!asset) throw KeelError.invalidField('asset', `no asset ${wanted} on this chain`);
    const units = parseUnits(input.amount, asset.decimals);
    if (units === null) throw KeelError.invalidField('amount', `must be a decimal string with at most ${asset.decimals} decimals`);
    if (units <= 0n || units > MAX_FAUCET_AMOUNT * 10n ** BigInt(asset.decimals)) throw KeelError.invalidField('amount', `must be above 0 and at most ${MAX_FAUCET_AMOUNT}`);
    const { txHash } = await fundFromFaucet(network.spec.rpcUrl, devChainAccount(0).privateKey, {
      to: input.address,
      amount: input.amount,
      token: asset.isNative ? undefined : { address: asset.address, decimals: asset.decimals },
    });
    return { txHash, blockchainId: network.blockchainId, assetId: asset.id, symbol: asset.symbol, to: ethers.getAddress(input.address), amount: formatScaled(units, asset.decimals) };
  }
}
