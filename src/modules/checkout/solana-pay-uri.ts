import { randomBytes } from 'node:crypto';
import { getAddressDecoder, isAddress } from '@solana/kit';
import { QR_TEXT_MAX_LENGTH } from './checkout-qr';

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
/** What a shortened label or message ends with. */
const ELLIPSIS = '\u2026';

/**
 * `solana:<recipient>?amount=<decimal>&spl-token=<mint>&reference=<key>&label=…&message=…&memo=…`:
 * the parameters in the spec's order, each value percent-encoded (encodeURIComponent: a space is
 * `%20`, never `+`). Refuses what a wallet would refuse (an address that is not base58 of 32 bytes,
 * an amount that is not a plain non-negative decimal). At most `maxLength` characters (what a QR
 * code holds, QR_TEXT_MAX_LENGTH): the label, then the message, are shortened (ending with `…`) to
 * the room the rest leaves, and left out when none is left; what the payment needs (recipient,
 * amount, mint, references, memo) is never shortened.
 */
export function solanaPayUri(request: SolanaPayRequest, maxLength = QR_TEXT_MAX_LENGTH): string {
  const key = (name: string, value: string) => {
    if (!isAddress(value)) throw new Error(`Solana Pay: ${name} is not a Solana address: ${value}`);
    return value;
  };
  if (!DECIMAL.test(request.amount)) throw new Error(`Solana Pay: amount must be a non-negative decimal: ${request.amount}`);
  const param = (name: string, value: string) => `${name}=${encodeURIComponent(value)}`;
  const head = [`solana:${key('recipient', request.recipient)}?${param('amount', request.amount)}`];
  if (request.splToken) head.push(param('spl-token', key('spl-token', request.splToken)));
  for (const ref of request.reference ?? []) head.push(param('reference', key('reference', ref)));
  const memo = request.memo ? [param('memo', wellFormed(request.memo))] : [];
  let room = maxLength - [...head, ...memo].join('&').length;
  const shown: string[] = [];
  for (const [name, value] of [['label', request.label], ['message', request.message]] as const) {
    const part = value ? shortened(name, wellFormed(value), room - 1) : null;
    if (part === null) continue;
    shown.push(part);
    room -= part.length + 1;
  }
  return [...head, ...shown, ...memo].join('&');
}

/** `name=value` in at most `room` characters, the value cut (at a character, ending with `…`) to fit; null when not one character of it fits. */
function shortened(name: string, value: string, room: number): string | null {
  const whole = `${name}=${encodeURIComponent(value)}`;
  if (whole.length <= room) return whole;
  let left = room - name.length - 1 - encodeURIComponent(ELLIPSIS).length;
  let kept = '';
  for (const char of value) {
    left -= encodeURIComponent(char).length;
    if (left < 0) break;
    kept += char;
  }
  return kept ? `${name}=${encodeURIComponent(kept + ELLIPSIS)}` : null;
}

/** Lone surrogates (which percent-encoding refuses) as U+FFFD. */
function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** A fresh reference for one payment request: 32 random bytes in base58 (a public key's form; it needs no private key). */
export function newSolanaPayReference(): string {
  return getAddressDecoder().decode(randomBytes(32));
}
