import { ethers } from 'ethers';
import type { SecretBox } from '../../platform/crypto/secret-box';
import type { SealedColumn } from '../../platform/crypto/reseal';
import { KeyThread } from './key-thread';

/** Where master wallets' sealed mnemonics live, for `keel secrets reseal`. */
export const SEALED_MNEMONICS: SealedColumn = { table: 'master_wallets', column: 'sealedMnemonic', boundBy: 'id' };

export interface NewWalletKeys {
  sealedMnemonic: string;
  accountXpub: string;
  walletAddress: string;
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

  close(): Promise<void> {
    return this.thread.close();
  }
}
