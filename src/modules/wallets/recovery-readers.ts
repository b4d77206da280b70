import { ethers } from 'ethers';
import { isAddress } from '@solana/kit';
import { KeelError } from '../../platform/errors';
import type { GuardedHttp } from '../../platform/net/guarded-http';
import { guardedFetchRequest, guardedSolanaTransport } from '../../platform/net/guarded-rpc';
import { SolanaChain } from '../../platform/chain-port/solana-chain';
import type { ChainFamily } from '../../platform/chain-port/chain-port';
import { formatScaled } from '../../platform/decimal';
import { jsonRpcProvider, SOL_DECIMALS, type AssetModel, type BlockchainModel, type ChainNetworks } from '../chains';
import { readBalances, readTokenFacts } from '../../platform/chain-port/evm-chain';
import { checksumOrNull } from './wallet-configurations';

export interface RecoverableTokenView {
  address: string;
  symbol: string;
  balance: string;
  name: string;
  logoUrl: string;
  decimals: number;
}

export interface RecoverableAssetsView {
  /** Native balance in whole units. */
  native: string;
  tokens: RecoverableTokenView[];
}

/** What to read: an address of Keel's on a chain, the caller's tokens (checked by the family's tokenAddress), and where. */
export interface RecoveryRead {
  chain: BlockchainModel;
  owner: string;
  /** null: the chain's registered tokens (Solana: and every mint the owner holds an account of). */
  tokens: string[] | null;
  registered: AssetModel[];
  /** Read through this JSON-RPC URL instead of the configured node (checked to serve the same chain). */
  rpcUrl?: string;
}

/**
 * What differs between chain families for asset recovery: a token address's form, and how the
 * balances are read. A read that fails for want of an answer from the node throws a plain error
 * (the caller's UPSTREAM_ERROR); a KeelError is the caller's to see as it is.
 */
export interface RecoveryReader {
  /** The token address in its canonical form, null when it is not one (EVM: a checksummed contract; Solana: a base58 mint). */
  tokenAddress(text: string): string | null;
  /** What a token address must be, for the refusal of one that is not. */
  tokenForm: string;
  read(request: RecoveryRead): Promise<RecoverableAssetsView>;
}

/** A registered asset's view, its balance to be filled. */
const registeredView = (a: AssetModel, decimals = a.decimals) => ({ address: a.address, symbol: a.symbol, name: a.name, decimals, logoUrl: a.logoUrl });

/** EVM: native and ERC20 balances (registered tokens, or the given contracts read for their facts). */
function evmRecovery(networks: ChainNetworks, rpcConnector: GuardedHttp): RecoveryReader {
  async function readerFor(chain: BlockchainModel, rpcUrl?: string): Promise<{ provider: ethers.JsonRpcProvider; owned: boolean }> {
    if (!rpcUrl) {
      const network = networks.get(chain.id);
      if (!network) throw new KeelError('INVALID_NETWORK', `${chain.name} has no reachable node in this deployment`);
      return { provider: network.provider, owned: false };
    }
    const refused = await rpcConnector.guard.refuseUrl(rpcUrl);
    if (refused) throw KeelError.invalidField('rpcUrl', refused);
    const provider = jsonRpcProvider(guardedFetchRequest(rpcConnector, rpcUrl), Number(chain.chainId));
    try {
      const answered: string = await provider.send('eth_chainId', []);
      if (Number(answered) !== Number(chain.chainId)) {
        throw new KeelError('INVALID_NETWORK', `rpcUrl serves chain ${Number(answered)}, not ${chain.name} (${chain.chainId})`);
      }
    } catch (e) {
      provider.destroy();
      if (e instanceof KeelError) throw e;
      throw KeelError.invalidField('rpcUrl', 'did not answer eth_chainId');
    }
    return { provider, owned: true };
  }

  return {
    tokenAddress: checksumOrNull,
    tokenForm: 'EVM address (format or checksum)',
    read: async ({ chain, owner, tokens, registered, rpcUrl }) => {
      const { provider, owned } = await readerFor(chain, rpcUrl);
      try {
        const known = new Map(registered.map((a) => [a.address.toLowerCase(), a]));
        const wanted = tokens ?? registered.filter((a) => !a.isNative).map((a) => a.address);
        const facts = await Promise.all(
          wanted.map(async (tokenAddress) => {
            const asset = known.get(tokenAddress.toLowerCase());
            if (asset) return registeredView(asset);
            const read = await readTokenFacts(provider, tokenAddress);
            if (!read) throw new KeelError('INVALID_ADDRESS', `${tokenAddress} is not an ERC20 token on ${chain.name}`, { field: 'tokenAddresses' });
            return { address: tokenAddress, ...read, logoUrl: '' };
          }),
        );
        const [native, ...balances] = await readBalances(provider, owner, [{ isNative: true, address: '' }, ...facts.map((f) => ({ isNative: false, address: f.address }))]);
        return {
          native: formatScaled(native, 18),
          tokens: facts.map((f, i) => ({ ...f, balance: formatScaled(balances[i], f.decimals) })),
        };
      } finally {
        if (owned) provider.destroy();
      }
    },
  };
}

/**
 * Unregistered mints listed when none are named: anyone can send an address tokens (spam included),
 * and each listed mint costs account reads; the rest are read by naming them in tokenAddresses.
 */
const MAX_UNREGISTERED_HELD = 100;

/**
 * Solana: SOL and SPL tokens through the chain port: the registered mints and every mint the owner
 * holds an account of (Token and Token-2022: tokens sent to it that Keel does not know), or exactly
 * the given mints. Decimals from the mint account; name and symbol from the registry, else the
 * token's metadata; a balance sums the owner's accounts of the mint.
 */
function solanaRecovery(networks: ChainNetworks, rpcConnector: GuardedHttp): RecoveryReader {
  async function portFor(chain: BlockchainModel, rpcUrl?: string): Promise<SolanaChain> {
    const configured = networks.solana(chain.id)?.port;
    if (!configured) throw new KeelError('INVALID_NETWORK', `${chain.name} has no reachable node in this deployment`);
    if (!rpcUrl) return configured;
    const refused = await rpcConnector.guard.refuseUrl(rpcUrl);
    if (refused) throw KeelError.invalidField('rpcUrl', refused);
    const custom = new SolanaChain({ rpcUrl, transport: guardedSolanaTransport(rpcConnector, rpcUrl) });
    const [theirs, ours] = await Promise.all([custom.genesisHash().catch(() => null), configured.genesisHash()]);
    if (theirs === null) throw KeelError.invalidField('rpcUrl', 'did not answer getGenesisHash');
    if (theirs !== ours) throw new KeelError('INVALID_NETWORK', `rpcUrl serves the cluster of genesis hash ${theirs}, not ${chain.name} (${ours})`);
    return custom;
  }

  return {
    tokenAddress: (text) => (isAddress(text) ? text : null),
    tokenForm: 'Solana mint address (base58)',
    read: async ({ chain, owner, tokens, registered, rpcUrl }) => {
      const port = await portFor(chain, rpcUrl);
      const known = new Map(registered.filter((a) => !a.isNative).map((a) => [a.address, a]));
      const [native, held] = await Promise.all([port.balance(owner, { kind: 'native' }), port.heldTokens(owner)]);
      const mints = tokens ?? [...new Set([...known.keys(), ...[...held.keys()].filter((m) => !known.has(m)).sort().slice(0, MAX_UNREGISTERED_HELD)])];
      const facts = await port.tokenFacts(mints);
      return {
        native: formatScaled(native, SOL_DECIMALS),
        tokens: mints.map((mint, i) => {
          const read = facts[i];
          const asset = known.get(mint);
          if (!read && !asset) throw new KeelError('INVALID_ADDRESS', `${mint} is not an SPL token mint on ${chain.name}`, { field: 'tokenAddresses' });
          const decimals = read?.decimals ?? asset!.decimals;
          const view = asset ? registeredView(asset, decimals) : { address: mint, symbol: read!.symbol, name: read!.name, decimals, logoUrl: '' };
          return { ...view, balance: formatScaled(held.get(mint) ?? 0n, decimals) };
        }),
      };
    },
  };
}

/** The one place asset recovery branches on the chain family. */
export function recoveryReader(family: ChainFamily, networks: ChainNetworks, rpcConnector: GuardedHttp): RecoveryReader {
  return family === 'solana' ? solanaRecovery(networks, rpcConnector) : evmRecovery(networks, rpcConnector);
}
