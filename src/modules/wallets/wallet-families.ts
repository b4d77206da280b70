import type { AssetModel, ChainNetworks } from '../chains';
import { chainAsset, type ChainFamily } from '../../platform/chain-port/chain-port';
import type { WalletKeys } from './wallet-keys';

/** A master wallet as its family's keys need it. */
export interface WalletKeyRow {
  id: string;
  sealedMnemonic: string;
  /** EVM: the account's extended public key; Solana: null (ed25519 has no public derivation). */
  accountXpub: string | null;
}

/**
 * What differs between chain families for master wallets and their addresses: the keys made for a
 * new wallet (secp256k1 or ed25519), an address's derivation, and the chains a wallet is enabled on.
 * Balances are read through the chain port, whatever the family (walletBalances).
 */
export interface WalletFamily {
  newKeys(walletId: string): Promise<{ sealedMnemonic: string; accountXpub: string | null; walletAddress: string }>;
  /** The address at `index` (0: the wallet's own). */
  addressAt(wallet: WalletKeyRow, index: number): Promise<string>;
  /** The chains the wallet is enabled on: its own, and with enableMultiChain every active chain of the family that shares its addresses. */
  enabledChains(ownChainId: string, multiChain: boolean, activeEvmChainIds: () => Promise<string[]>): Promise<string[]>;
}

/** EVM: secp256k1 at m/44'/60'/0'/0/i, addresses from the account xpub, one address on every EVM chain. */
function evmWallets(keys: WalletKeys): WalletFamily {
  return {
    newKeys: (walletId) => keys.create(walletId),
    addressAt: (wallet, index) => keys.addressAt(wallet.accountXpub!, index),
    enabledChains: async (own, multi, activeEvm) => (multi ? activeEvm() : [own]),
  };
}

/** Solana: SLIP-0010 ed25519 at m/44'/501'/i'/0', each address derived with the mnemonic opened (no public derivation); one cluster. */
function solanaWallets(keys: WalletKeys): WalletFamily {
  return {
    newKeys: async (walletId) => ({ ...(await keys.createSolana(walletId)), accountXpub: null }),
    addressAt: (wallet, index) => keys.solanaAddressAt(wallet.id, wallet.sealedMnemonic, index),
    enabledChains: async (own) => [own],
  };
}

/** The one place the wallets module branches on the chain family: the families' keys and derivations differ (the spec's shapes: an xpub on EVM, none on Solana). */
export function walletFamily(family: ChainFamily, keys: WalletKeys): WalletFamily {
  return family === 'solana' ? solanaWallets(keys) : evmWallets(keys);
}

/** The owner's balance of each asset on a chain through its port, in the smallest unit; null when the chain is not served here. */
export async function walletBalances(networks: ChainNetworks, blockchainId: string, owner: string, assets: AssetModel[]): Promise<bigint[] | null> {
  const port = networks.port(blockchainId);
  if (!port) return null;
  return Promise.all(assets.map((a) => port.balance(owner, chainAsset(a))));
}
