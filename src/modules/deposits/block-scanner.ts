import { ethers } from 'ethers';

/** keccak256("Transfer(address,address,uint256)"): the ERC-20 Transfer event. */
export const ERC20_TRANSFER_TOPIC = ethers.id('Transfer(address,address,uint256)');
/** The log index recorded for a native-coin transfer, which has no log. */
export const NATIVE_LOG_INDEX = -1;

export interface ScannedBlock {
  number: number;
  hash: string;
  parentHash: string;
  timestamp: Date;
}

/** Value that moved to or from a watched address in one block. */
export interface ObservedTransfer {
  txHash: string;
  /** NATIVE_LOG_INDEX for the native coin. */
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  blockTimestamp: Date;
  /** Checksummed. */
  from: string;
  to: string;
  rawValue: bigint;
  /** The token contract (checksummed), or null for the native coin. */
  token: string | null;
}

export interface ScannedRange {
  blocks: ScannedBlock[];
  transfers: ObservedTransfer[];
}

/** The chain changed under the scan (a reorg); the caller retries from its cursor. */
export class ChainMovedError extends Error {}

/**
 * Reads blocks `from..to` and finds every successful native and ERC-20 transfer (of the given token
 * contracts) whose sender or recipient is watched. Logs are checked against the block hashes read,
 * so a reorg during the scan surfaces as ChainMovedError rather than a mixed view of two forks.
 */
export async function scanBlocks(
  provider: ethers.JsonRpcProvider,
  range: { from: number; to: number },
  tokens: string[],
  isWatched: (address: string) => boolean,
): Promise<ScannedRange> {
  const numbers = Array.from({ length: range.to - range.from + 1 }, (_, i) => range.from + i);
  const [rawBlocks, logs] = await Promise.all([
    Promise.all(numbers.map((n) => provider.getBlock(n, true))),
    tokens.length ? provider.getLogs({ fromBlock: range.from, toBlock: range.to, address: tokens, topics: [ERC20_TRANSFER_TOPIC] }) : Promise.resolve([]),
  ]);
  const blocks: ScannedBlock[] = [];
  for (const [i, b] of rawBlocks.entries()) {
    if (!b || !b.hash) throw new ChainMovedError(`block ${numbers[i]} is not available`);
    if (i > 0 && b.parentHash !== blocks[i - 1].hash) throw new ChainMovedError(`block ${b.number} does not follow block ${b.number - 1}`);
    blocks.push({ number: b.number, hash: b.hash, parentHash: b.parentHash, timestamp: new Date(b.timestamp * 1000) });
  }
  const blockAt = (n: number) => blocks[n - range.from];

  const transfers: ObservedTransfer[] = [];
  for (const log of logs) {
    const block = blockAt(log.blockNumber);
    if (!block || block.hash !== log.blockHash) throw new ChainMovedError(`log of block ${log.blockNumber} belongs to another fork`);
    // ERC-721 shares the event signature but indexes the token id (four topics); only ERC-20 counts.
    if (log.topics.length !== 3 || log.data.length !== 66) continue;
    const from = ethers.getAddress(ethers.dataSlice(log.topics[1], 12));
    const to = ethers.getAddress(ethers.dataSlice(log.topics[2], 12));
    if (!isWatched(from) && !isWatched(to)) continue;
    transfers.push({ txHash: log.transactionHash, logIndex: log.index, blockNumber: block.number, blockHash: block.hash, blockTimestamp: block.timestamp, from, to, rawValue: BigInt(log.data), token: ethers.getAddress(log.address) });
  }

  const native: ObservedTransfer[] = [];
  for (const [i, b] of rawBlocks.entries()) {
    for (const tx of b!.prefetchedTransactions) {
      if (tx.value === 0n || !tx.to) continue;
      if (!isWatched(tx.from) && !isWatched(tx.to)) continue;
      native.push({ txHash: tx.hash, logIndex: NATIVE_LOG_INDEX, blockNumber: blocks[i].number, blockHash: blocks[i].hash, blockTimestamp: blocks[i].timestamp, from: ethers.getAddress(tx.from), to: ethers.getAddress(tx.to), rawValue: tx.value, token: null });
    }
  }
  // A reverted transaction moves no value: keep only native transfers whose receipt says success.
  const receipts = await Promise.all(native.map((t) => provider.getTransactionReceipt(t.txHash)));
  for (const [i, t] of native.entries()) {
    const receipt = receipts[i];
    if (!receipt || receipt.blockHash !== t.blockHash) throw new ChainMovedError(`receipt of ${t.txHash} belongs to another fork`);
    if (receipt.status === 1) transfers.push(t);
  }
  return { blocks, transfers };
}
