import type { ethers } from 'ethers';
import { nonceFate, SignedLine } from './nonce-fate';

/**
 * What broadcasting a recorded, signed transaction came to:
 * - `accepted`: the node holds it (just now or before), or its nonce is used by a transaction not
 *   yet final (maybe ours): follow it;
 * - `taken`: its nonce is used for good by a transaction that is none of the line's (see nonceFate);
 * - `refused`: the node refuses it for good (no coin for gas, a block gas limit);
 * - `retry`: anything else (the node unreachable): offer the same bytes again later.
 */
export type BroadcastOutcome = { kind: 'accepted' } | { kind: 'taken' } | { kind: 'refused'; reason: string } | { kind: 'retry'; reason: string };

/** Broadcasts a line's signed transaction; safe to repeat (the same bytes, the same nonce). */
export async function broadcastLine(provider: ethers.Provider, confirmations: number, line: SignedLine, rawTx: string): Promise<BroadcastOutcome> {
  try {
    await provider.broadcastTransaction(rawTx);
    return { kind: 'accepted' };
  } catch (e) {
    if (/already known|known transaction|already imported/i.test(messageOf(e))) return { kind: 'accepted' };
    if (isNonceTaken(e)) return (await nonceFate(provider, confirmations, line)).kind === 'taken' ? { kind: 'taken' } : { kind: 'accepted' };
    if (isDefinitive(e)) return { kind: 'refused', reason: shortReason(e) };
    return { kind: 'retry', reason: shortReason(e) };
  }
}

/** The node's own words: ethers keeps them in info.error, or in error when it could not classify them ("could not coalesce error"). */
function nodeMessage(e: unknown): string | undefined {
  const err = e as { info?: { error?: { message?: string } }; error?: { message?: string } };
  return err.info?.error?.message ?? err.error?.message;
}

function messageOf(e: unknown): string {
  const err = e as { shortMessage?: string; message?: string };
  return [nodeMessage(e), err.shortMessage, err.message].filter(Boolean).join(' | ');
}

export function shortReason(e: unknown): string {
  const err = e as { shortMessage?: string; message?: string };
  return (nodeMessage(e) ?? err.shortMessage ?? err.message ?? String(e)).slice(0, 300);
}

function isNonceTaken(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'NONCE_EXPIRED' || code === 'REPLACEMENT_UNDERPRICED' || /nonce too low|replacement transaction underpriced/i.test(messageOf(e));
}

function isDefinitive(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'INSUFFICIENT_FUNDS' || code === 'CALL_EXCEPTION' || /insufficient funds|doesn't have enough funds|exceeds block gas limit|intrinsic gas too low/i.test(messageOf(e));
}
