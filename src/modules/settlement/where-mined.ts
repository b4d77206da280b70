import type { ethers } from 'ethers';

/**
 * Where a transaction recorded as mined in a block is on the node's chain now: still in that block;
 * moved to another canonical block (mined again after a reorg); unsettled (the node reports a
 * receipt from a block no longer canonical: it is between two chains); or gone (no receipt).
 */
export type MinedWhere =
  | { kind: 'still'; receipt: ethers.TransactionReceipt }
  | { kind: 'moved'; receipt: ethers.TransactionReceipt }
  | { kind: 'unsettled' }
  | { kind: 'gone' };

export async function whereMined(provider: ethers.Provider, txHash: string, blockHash: string | null): Promise<MinedWhere> {
  const receipt = await provider.getTransactionReceipt(txHash);
  if (!receipt) return { kind: 'gone' };
  if (receipt.blockHash === blockHash) return { kind: 'still', receipt };
  const block = await provider.getBlock(receipt.blockNumber);
  return block?.hash === receipt.blockHash ? { kind: 'moved', receipt } : { kind: 'unsettled' };
}
