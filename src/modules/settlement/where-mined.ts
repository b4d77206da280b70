import type { ethers } from 'ethers';
import type { EvmChain } from '../../platform/chain-port/evm-chain';

/**
 * Where a transaction recorded as mined in a block is on the node's chain now: still in that block;
 * moved to another canonical block (mined again after a reorg); unsettled (the node reports a
 * receipt from a block no longer canonical: it is between two chains); gone (no receipt); or behind
 * (the node has not reached the recorded block: a fallback, restarted or load-balanced node that
 * cannot tell yet, never taken for a reorg; ChainPort.blockAt).
 */
export type MinedWhere =
  | { kind: 'still'; receipt: ethers.TransactionReceipt }
  | { kind: 'moved'; receipt: ethers.TransactionReceipt }
  | { kind: 'unsettled' }
  | { kind: 'gone' }
  | { kind: 'behind' };

export async function whereMined(port: EvmChain, txHash: string, recorded: { blockNumber: number; blockHash: string | null }): Promise<MinedWhere> {
  const provider = port.provider;
  const receipt = await provider.getTransactionReceipt(txHash);
  if (receipt && receipt.blockHash === recorded.blockHash) return { kind: 'still', receipt };
  const at = await port.blockAt(recorded.blockNumber, 'seen');
  if (at === 'unknown') return { kind: 'behind' };
  // No receipt, yet the recorded block is still the node's: the receipt lookup came from a node
  // behind (or one still indexing), not a reorg; wait.
  if (!receipt) return at !== 'none' && at.hash === recorded.blockHash ? { kind: 'behind' } : { kind: 'gone' };
  const block = await provider.getBlock(receipt.blockNumber);
  return block?.hash === receipt.blockHash ? { kind: 'moved', receipt } : { kind: 'unsettled' };
}

/**
 * whereMined of the first of one line's transactions (signings of one nonce: at most one is ever
 * mined) that the node does not report gone; gone when all are.
 */
export async function whereAnyMined(port: EvmChain, txHashes: string[], recorded: { blockNumber: number; blockHash: string | null }): Promise<MinedWhere> {
  for (const txHash of txHashes) {
    const where = await whereMined(port, txHash, recorded);
    if (where.kind !== 'gone') return where;
  }
  return { kind: 'gone' };
}
