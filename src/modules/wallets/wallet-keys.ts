import { randomBytes } from 'node:crypto';
import { ethers } from 'ethers';
import type { SecretBox } from '../../platform/crypto/secret-box';
import type { SealedColumn } from '../../platform/crypto/reseal';

/** BIP-44 for Ethereum: m/44'/60'/0'/0/i. Index 0 is the master wallet's own address. */
export const ACCOUNT_PATH = "m/44'/60'/0'/0";

/** Where master wallets' sealed mnemonics live, for `keel secrets reseal`. */
export const SEALED_MNEMONICS: SealedColumn = { table: 'master_wallets', column: 'sealedMnemonic', boundBy: 'id' };

export interface NewWalletKeys {
  sealedMnemonic: string;
  accountXpub: string;
  walletAddress: string;
}

/**
 * HD keys of master wallets. The mnemonic (24 words) is sealed at once and only opened to sign;
 * addresses derive from the account's extended public key, which is not a secret.
 */
export class WalletKeys {
  constructor(private readonly box: SecretBox) {}

  create(walletId: string): NewWalletKeys {
    const mnemonic = ethers.Mnemonic.fromEntropy(randomBytes(32));
    const account = ethers.HDNodeWallet.fromMnemonic(mnemonic, ACCOUNT_PATH);
    return {
      sealedMnemonic: this.box.seal(mnemonic.phrase, walletId),
      accountXpub: account.neuter().extendedKey,
      walletAddress: account.deriveChild(0).address,
    };
  }

  static addressAt(accountXpub: string, index: number): string {
    return ethers.HDNodeWallet.fromExtendedKey(accountXpub).deriveChild(index).address;
  }

  /** The signing key of address `index`; callers keep it only as long as one signature takes. */
  signer(walletId: string, sealedMnemonic: string, index: number, provider?: ethers.Provider): ethers.HDNodeWallet {
    const phrase = this.box.open(sealedMnemonic, walletId);
    return ethers.HDNodeWallet.fromPhrase(phrase, undefined, `${ACCOUNT_PATH}/${index}`).connect(provider ?? null);
  }
}
