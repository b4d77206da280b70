import type { ethers } from 'ethers';

/** The transactions Keel signed for one line: they all share the line's nonce (fee bumps re-sign it). */
export interface SignedLine {
  fromAddress: string;
  nonce: string | null;
  txHash: string | null;
  replacedTxHashes: string[];
}

/**
 * What the chain says about a line's nonce:
 * - `mined`: one of the line's own transactions has a receipt (at any depth);
 * - `taken`: the nonce is used by a transaction at the chain's confirmation depth that is none of
 *   the line's, so none of them can ever be mined;
 * - `open`: anything else (unused, or used by a transaction not yet final): one of the line's
 *   transactions may still be mined, so the line must keep following its hashes.
 */
export type NonceFate = { kind: 'mined'; receipt: ethers.TransactionReceipt } | { kind: 'taken' } | { kind: 'open' };

/** Every hash signed for the line, oldest first. */
export function lineHashes(line: SignedLine): string[] {
  return [...new Set([...line.replacedTxHashes, line.txHash].filter((h): h is string => !!h))];
}

export async function nonceFate(provider: ethers.Provider, confirmations: number, line: SignedLine): Promise<NonceFate> {
  const mined = await receiptOf(provider, line);
  if (mined) return { kind: 'mined', receipt: mined };
  if (line.nonce === null) return { kind: 'open' };
  const finalBlock = (await provider.getBlockNumber()) - confirmations + 1;
  if (finalBlock < 0 || (await provider.getTransactionCount(line.fromAddress, finalBlock)) <= Number(line.nonce)) return { kind: 'open' };
  // Looked again: one of ours may have been mined since the first look, and then the nonce is ours.
  const late = await receiptOf(provider, line);
  return late ? { kind: 'mined', receipt: late } : { kind: 'taken' };
}

async function receiptOf(provider: ethers.Provider, line: SignedLine): Promise<ethers.TransactionReceipt | null> {
  const receipts = await Promise.all(lineHashes(line).map((h) => provider.getTransactionReceipt(h)));
  return receipts.find((r) => r !== null) ?? null;
}

/** Whether the node holds any of the line's transactions (pending or mined). */
export async function nodeKnowsAny(provider: ethers.Provider, line: SignedLine): Promise<boolean> {
  const known = await Promise.all(lineHashes(line).map((h) => provider.getTransaction(h)));
  return known.some((t) => t !== null);
}
