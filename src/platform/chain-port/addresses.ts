/**
 * Addresses as each chain family writes them, for what is checked before any chain port is at hand
 * (a transfer's recipient, a sweep's destination): EVM 0x-hex, checksummed (a mixed-case one with a
 * bad checksum is none); Solana the base58 of 32 bytes, case-sensitive, kept as given.
 */
import { isAddress } from '@solana/kit';
import type { ChainFamily } from './chain-port';
import { checksummed } from './evm-chain';

/** The address as its family writes it, or null when `text` is not an address of that family. */
export function addressOn(family: ChainFamily, text: string): string | null {
  if (family === 'evm') return checksummed(text);
  return typeof text === 'string' && isAddress(text) ? text : null;
}

/** The family of a well-formed address (base58 has no 0). */
export function familyOf(address: string): ChainFamily {
  return address.startsWith('0x') ? 'evm' : 'solana';
}

/** Addresses compare as their family writes them: EVM ignoring case, Solana exactly. */
export function sameAddress(a: string, b: string): boolean {
  return familyOf(a) === 'evm' ? a.toLowerCase() === b.toLowerCase() : a === b;
}
