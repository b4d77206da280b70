import { randomBytes } from 'node:crypto';
import { getAddressDecoder, isAddress } from '@solana/kit';

/** A Solana Pay transfer request (https://docs.solanapay.com/spec), as a checkout asks for it. */
export interface SolanaPayRequest {
  /** The base58 address that receives the payment (SOL goes to it; an SPL token to its associated token account). */
  recipient: string;
  /** In the asset's units, as a decimal (`1`, `7.25`): never scientific notation. */
  amount: string;
  /** The SPL token's mint; absent for SOL. */
  splToken?: string | null;
  /** Base58 32-byte values the payer's wallet adds to the transfer as read-only keys, so it can be found by them. */
  reference?: string[];
  label?: string | null;
  message?: string | null;
  memo?: string | null;
}

const DECIMAL = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;

/**
 * `solana:<recipient>?amount=<decimal>&spl-token=<mint>&reference=<key>&label=…&message=…&memo=…`:
 * the parameters in the spec's order, each value percent-encoded (encodeURIComponent: a space is
 * `%20`, never `+`). Refuses what a wallet would refuse (an address that is not base58 of 32 bytes,
 * an amount that is not a plain non-negative decimal).
 */
export function solanaPayUri(request: SolanaPayRequest): string {
  const key = (name: string, value: string) => {
    if (!isAddress(value)) throw new Error(`Solana Pay: ${name} is not a Solana address: ${value}`);
    return value;
  };
  if (!DECIMAL.test(request.amount)) throw new Error(`Solana Pay: amount must be a non-negative decimal: ${request.amount}`);
  const params: [string, string][] = [['amount', request.amount]];
  if (request.splToken) params.push(['spl-token', key('spl-token', request.splToken)]);
  for (const ref of request.reference ?? []) params.push(['reference', key('reference', ref)]);
  if (request.label) params.push(['label', request.label]);
  if (request.message) params.push(['message', request.message]);
  if (request.memo) params.push(['memo', request.memo]);
  return `solana:${key('recipient', request.recipient)}?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`;
}

/** A fresh reference for one payment request: 32 random bytes in base58 (a public key's form; it needs no private key). */
export function newSolanaPayReference(): string {
  return getAddressDecoder().decode(randomBytes(32));
}
