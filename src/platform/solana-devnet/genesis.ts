/**
 * What the sandbox Solana network holds at genesis, the same on every start: the faucet's account
 * (a keypair from a published seed: this is a test network, its keys are not secrets) and the test
 * stablecoin mints at fixed addresses, their mint authority the faucet.
 */
import { createHash } from 'node:crypto';
import type { LiteSVM } from 'litesvm';
import { Address, KeyPairSigner, createKeyPairSignerFromPrivateKeyBytes, getAddressDecoder, lamports, none, some } from '@solana/kit';
import { getMintEncoder } from '@solana-program/token';
import { TOKEN_PROGRAM } from '../chain-port/spl-token-facts';
import { SYSTEM_PROGRAM } from './ledger';

export interface DevnetMint {
  symbol: string;
  name: string;
  decimals: number;
  address: Address;
}

function seeded(label: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`keel solana devnet: ${label}`).digest());
}

/** The test mints: 6 decimals like their mainnet namesakes, at addresses derived from fixed labels. */
export const DEVNET_MINTS: readonly DevnetMint[] = [
  { symbol: 'USDC', name: 'Test USD Coin', decimals: 6, address: getAddressDecoder().decode(seeded('USDC mint')) },
  { symbol: 'USDT', name: 'Test Tether USD', decimals: 6, address: getAddressDecoder().decode(seeded('USDT mint')) },
];

/** The faucet's lamports at genesis: 500 million SOL. */
export const FAUCET_GENESIS_LAMPORTS = 500_000_000n * 1_000_000_000n;

/** The faucet's keypair (from the seed `keel solana devnet: faucet`). */
export function devnetFaucet(): Promise<KeyPairSigner> {
  return createKeyPairSignerFromPrivateKeyBytes(seeded('faucet'));
}

/** Writes the genesis accounts into a new LiteSVM. */
export function writeGenesis(svm: LiteSVM, faucet: Address): void {
  svm.setAccount({ address: faucet, lamports: lamports(FAUCET_GENESIS_LAMPORTS), data: new Uint8Array(), programAddress: SYSTEM_PROGRAM, executable: false, space: 0n });
  const encoder = getMintEncoder();
  for (const mint of DEVNET_MINTS) {
    const data = new Uint8Array(encoder.encode({ mintAuthority: some(faucet), supply: 0n, decimals: mint.decimals, isInitialized: true, freezeAuthority: none() }));
    svm.setAccount({ address: mint.address, lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))), data, programAddress: TOKEN_PROGRAM, executable: false, space: BigInt(data.length) });
  }
}
