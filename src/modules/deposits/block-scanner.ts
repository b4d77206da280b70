import { ethers } from 'ethers';

/** keccak256("Transfer(address,address,uint256)"): the ERC-20 Transfer event. */
export const ERC20_TRANSFER_TOPIC = ethers.id('Transfer(address,address,uint256)');
/** ERC-1155's TransferSingle and TransferBatch events. */
export const ERC1155_SINGLE_TOPIC = ethers.id('TransferSingle(address,address,address,uint256,uint256)');
export const ERC1155_BATCH_TOPIC = ethers.id('TransferBatch(address,address,address,uint256[],uint256[])');
const abiCoder = ethers.AbiCoder.defaultAbiCoder();
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
  /** An NFT transfer's token id (rawValue is then the number of tokens: 1 for ERC-721). */
  tokenId?: bigint;
  /** The id's position in an ERC-1155 TransferBatch log; 0 for every other transfer. */
  batchIndex: number;
}

export interface ScannedRange {
  blocks: ScannedBlock[];
  transfers: ObservedTransfer[];
}

/** The chain changed under the scan (a reorg); the caller retries from its cursor. */
export class ChainMovedError extends Error {}

/**
 * Reads blocks `from..to` and finds every successful native and ERC-20 transfer (of the given token
 * contracts) and every ERC-721 / ERC-1155 transfer (of the given NFT collections) whose sender or
 * recipient is watched. Logs are checked against the block hashes read, so a reorg during the scan
 * surfaces as ChainMovedError rather than a mixed view of two forks.
 */
export async function scanBlocks(
  provider: ethers.JsonRpcProvider,
  range: { from: number; to: number },
  tokens: string[],
  isWatched: (address: string) => boolean,
  nfts: string[] = [],
): Promise<ScannedRange> {
  const contracts = [...tokens, ...nfts];
  const isNft = new Set(nfts.map((a) => a.toLowerCase()));
  const numbers = Array.from({ length: range.to - range.from + 1 }, (_, i) => range.from + i);
  const [rawBlocks, logs] = await Promise.all([
    Promise.all(numbers.map((n) => provider.getBlock(n, true))),
    contracts.length
      ? provider.getLogs({ fromBlock: range.from, toBlock: range.to, address: contracts, topics: [[ERC20_TRANSFER_TOPIC, ERC1155_SINGLE_TOPIC, ERC1155_BATCH_TOPIC]] })
      : Promise.resolve([]),
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
    for (const moved of decodeTransferLog(log, isNft.has(log.address.toLowerCase()))) {
      if (!isWatched(moved.from) && !isWatched(moved.to)) continue;
      transfers.push({ txHash: log.transactionHash, logIndex: log.index, blockNumber: block.number, blockHash: block.hash, blockTimestamp: block.timestamp, token: ethers.getAddress(log.address), ...moved });
    }
  }

  const native: ObservedTransfer[] = [];
  for (const [i, b] of rawBlocks.entries()) {
    for (const tx of b!.prefetchedTransactions) {
      if (tx.value === 0n || !tx.to) continue;
      if (!isWatched(tx.from) && !isWatched(tx.to)) continue;
      native.push({ txHash: tx.hash, logIndex: NATIVE_LOG_INDEX, blockNumber: blocks[i].number, blockHash: blocks[i].hash, blockTimestamp: blocks[i].timestamp, from: ethers.getAddress(tx.from), to: ethers.getAddress(tx.to), rawValue: tx.value, token: null, batchIndex: 0 });
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

type MovedValue = Pick<ObservedTransfer, 'from' | 'to' | 'rawValue' | 'tokenId' | 'batchIndex'>;

const topicAddress = (topic: string) => ethers.getAddress(ethers.dataSlice(topic, 12));

/**
 * What one log of a token contract moved: an ERC-20 Transfer (three topics, one word of data), an
 * ERC-721 Transfer (the same signature with the token id indexed: four topics, no data), or an
 * ERC-1155 TransferSingle / TransferBatch (one entry per id of the batch). A log of another shape,
 * or an NFT event from a contract registered as ERC-20 (and the reverse), moves nothing Keel counts.
 */
export function decodeTransferLog(log: { topics: readonly string[]; data: string }, nftCollection: boolean): MovedValue[] {
  const [topic] = log.topics;
  if (topic === ERC20_TRANSFER_TOPIC) {
    if (!nftCollection && log.topics.length === 3 && log.data.length === 66) return [{ from: topicAddress(log.topics[1]), to: topicAddress(log.topics[2]), rawValue: BigInt(log.data), batchIndex: 0 }];
    if (nftCollection && log.topics.length === 4 && log.data === '0x') return [{ from: topicAddress(log.topics[1]), to: topicAddress(log.topics[2]), rawValue: 1n, tokenId: BigInt(log.topics[3]), batchIndex: 0 }];
    return [];
  }
  if (!nftCollection || log.topics.length !== 4) return [];
  const from = topicAddress(log.topics[2]);
  const to = topicAddress(log.topics[3]);
  try {
    if (topic === ERC1155_SINGLE_TOPIC) {
      const [id, value] = abiCoder.decode(['uint256', 'uint256'], log.data) as unknown as [bigint, bigint];
      return value > 0n ? [{ from, to, rawValue: value, tokenId: id, batchIndex: 0 }] : [];
    }
    if (topic === ERC1155_BATCH_TOPIC) {
      const [ids, values] = abiCoder.decode(['uint256[]', 'uint256[]'], log.data) as unknown as [bigint[], bigint[]];
      if (ids.length !== values.length) return [];
      return Array.from(ids).flatMap((id, batchIndex) => (values[batchIndex] > 0n ? [{ from, to, rawValue: values[batchIndex], tokenId: id, batchIndex }] : []));
    }
  } catch {
    // Data that does not decode as the standard says: not a transfer Keel can count.
  }
  return [];
}
