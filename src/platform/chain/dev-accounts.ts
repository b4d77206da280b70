import { ethers } from 'ethers';

/** Hardhat's default mnemonic: publicly known keys, never use them anywhere real. */
export const DEV_CHAIN_MNEMONIC = 'test test test test test test test test test test test junk';

export interface DevAccount {
  address: string;
  privateKey: string;
}

const accountCache = new Map<number, DevAccount>();

/** Account `index` of DEV_CHAIN_MNEMONIC (m/44'/60'/0'/0/index); #0 to #9 are funded on dev chains. */
export function devChainAccount(index = 0): DevAccount {
  let account = accountCache.get(index);
  if (!account) {
    const wallet = ethers.HDNodeWallet.fromPhrase(DEV_CHAIN_MNEMONIC, undefined, `m/44'/60'/0'/0/${index}`);
    account = { address: wallet.address, privateKey: wallet.privateKey };
    accountCache.set(index, account);
  }
  return account;
}
