import { ethers } from 'ethers';
import { Address, KeyPairSigner, createKeyPairSignerFromPrivateKeyBytes, getAddressDecoder } from '@solana/kit';
import type { SecretBox } from '../../platform/crypto/secret-box';
import type { SealedColumn } from '../../platform/crypto/reseal';
import { KeyThread, solanaPath } from './key-thread';

/** Where master wallets' sealed mnemonics live, for `keel secrets reseal`. */
export const SEALED_MNEMONICS: SealedColumn = { table: 'master_wallets', column: 'sealedMnemonic', boundBy: 'id' };

export interface NewWalletKeys {
  sealedMnemonic: string;
  accountXpub: string;
  walletAddress: string;
}

/** A Solana master wallet's keys: no extended public key exists for ed25519 (hardened derivation only). */
export interface NewSolanaWalletKeys {
  sealedMnemonic: string;
  walletAddress: Address;
}

/**
 * HD keys of master wallets. The mnemonic (24 words) is sealed at once and only opened to sign;
 * addresses derive from the account's extended public key, which is not a secret. The derivations
 * run on the key thread, off the event loop.
 */
export class WalletKeys {
  constructor(
    private readonly box: SecretBox,
    private readonly thread = new KeyThread(),
  ) {}

  async create(walletId: string): Promise<NewWalletKeys> {
    const { phrase, accountXpub, walletAddress } = await this.thread.run('newWallet', {});
    return { sealedMnemonic: this.box.seal(phrase, walletId), accountXpub, walletAddress };
  }

  addressAt(accountXpub: string, index: number): Promise<string> {
    return this.thread.run('address', { accountXpub, index });
  }

  /** The signing key of address `index`; callers keep it only as long as one signature takes. */
  async signer(walletId: string, sealedMnemonic: string, index: number, provider?: ethers.Provider): Promise<ethers.Wallet> {
    const phrase = this.box.open(sealedMnemonic, walletId);
    return new ethers.Wallet(await this.thread.run('privateKey', { phrase, index }), provider ?? null);
  }

  /** A new Solana wallet: a sealed mnemonic and its address at m/44'/501'/0'/0'. */
  async createSolana(walletId: string): Promise<NewSolanaWalletKeys> {
    const { phrase } = await this.thread.run('newPhrase', {});
    const { publicKey } = await this.thread.run('ed25519FromPhrase', { phrase, path: solanaPath(0) });
    return { sealedMnemonic: this.box.seal(phrase, walletId), walletAddress: solanaAddress(publicKey) };
  }

  /**
   * The Solana address at m/44'/501'/index'/0'. Unlike EVM addresses it needs the mnemonic (opened
   * here, on this call only): ed25519 keys have no public derivation.
   */
  async solanaAddressAt(walletId: string, sealedMnemonic: string, index: number): Promise<Address> {
    const phrase = this.box.open(sealedMnemonic, walletId);
    const { publicKey } = await this.thread.run('ed25519FromPhrase', { phrase, path: solanaPath(index) });
    return solanaAddress(publicKey);
  }

  /** The Solana signing key of address `index`, as a non-extractable WebCrypto key pair. */
  async solanaSigner(walletId: string, sealedMnemonic: string, index: number): Promise<KeyPairSigner> {
    const phrase = this.box.open(sealedMnemonic, walletId);
    const { privateKey } = await this.thread.run('ed25519FromPhrase', { phrase, path: solanaPath(index) });
    return createKeyPairSignerFromPrivateKeyBytes(Buffer.from(privateKey, 'hex'));
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

/** A Solana address is the base58 of the ed25519 public key. */
function solanaAddress(publicKeyHex: string): Address {
  return getAddressDecoder().decode(Buffer.from(publicKeyHex, 'hex'));
}
