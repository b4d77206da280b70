/**
 * The chain port for EVM chains, over ethers and any JSON-RPC node (Keel's Hardhat dev chains or a
 * real one): native and ERC-20 balances, blocks scanned for native, ERC-20, ERC-721 and ERC-1155
 * transfers to or from watched addresses, gas estimates, and transfers signed with a nonce. Finality
 * is the chain's confirmation count (KEEL_CHAINS `confirmations`).
 *
 * Beyond the port, what Keel's nonce-based sender needs (withdrawals/transaction-sender.ts keeps the
 * queue, the nonce count and the fee-bump policy): signWithNonce, broadcastLine, lineFate,
 * nodeKnowsAny, pendingNonce, bumpedFees, replacementFees (evm-transactions.ts).
 */
import { ethers } from 'ethers';
import { ChainMovedError, NATIVE_TRANSFER_INDEX, TransferRefused, type BlockAt, type ChainAsset, type ChainBlock, type ChainPort, type ChainTransfer, type FeeEstimate, type Finality, type PaidFee, type PreparedTransfer, type ScanWatch, type ScannedRange, type TransferOutcome, type TransferRequest } from './chain-port';
import { readNftBalance } from './evm-nft-reader';
import { broadcastLine, bumpedFees, nodeKnowsAny, replacementFees, nodeRefused, nonceFate, shortReason, transactionRequest, type BroadcastOutcome, type CallRequest, type Eip1559Fees, type NonceFate, type SignedLine } from './evm-transactions';

/** keccak256("Transfer(address,address,uint256)"): the ERC-20 Transfer event. */
export const ERC20_TRANSFER_TOPIC = ethers.id('Transfer(address,address,uint256)');
/** ERC-1155's TransferSingle and TransferBatch events. */
export const ERC1155_SINGLE_TOPIC = ethers.id('TransferSingle(address,address,address,uint256,uint256)');
export const ERC1155_BATCH_TOPIC = ethers.id('TransferBatch(address,address,address,uint256[],uint256[])');
const abiCoder = ethers.AbiCoder.defaultAbiCoder();

const ERC20_READ_ABI = [
  'function balanceOf(address owner) view returns (uint256)',
  'function symbol() view returns (string)',
  'function name() view returns (string)',
  'function decimals() view returns (uint8)',
];
export const erc20Reader = new ethers.Interface(ERC20_READ_ABI);

/** Gas limits are signed with this headroom over the estimate (percent). */
const GAS_LIMIT_HEADROOM = 120n;

export interface EvmChainOptions {
  provider: ethers.JsonRpcProvider;
  chainId: number;
  /** Blocks a transaction needs (its own included) to count as confirmed and final. */
  confirmations: number;
}

/** A transaction signed with a nonce, not yet sent. */
export interface SignedTransaction {
  txHash: string;
  raw: string;
}

export class EvmChain implements ChainPort<ethers.Signer> {
  readonly family = 'evm' as const;
  readonly provider: ethers.JsonRpcProvider;
  readonly chainId: number;
  readonly confirmations: number;

  constructor(options: EvmChainOptions) {
    ({ provider: this.provider, chainId: this.chainId, confirmations: this.confirmations } = options);
  }

  /** A mixed-case address must carry a valid checksum (EIP-55); all lower or upper case is taken as written. */
  isAddress(value: string): boolean {
    return checksummed(value) !== null;
  }

  async height(finality: Finality): Promise<number> {
    const head = await this.provider.getBlockNumber();
    return finality === 'seen' ? head : Math.max(0, head - this.confirmations + 1);
  }

  async balance(owner: string, asset: ChainAsset): Promise<bigint> {
    if (asset.kind === 'native') return this.provider.getBalance(owner);
    if (asset.kind === 'token') return new ethers.Contract(asset.address, erc20Reader, this.provider).balanceOf(owner) as Promise<bigint>;
    return readNftBalance(this.provider, owner, asset, asset.tokenId);
  }

  /**
   * Reads blocks `from..to` and finds every successful native and ERC-20 transfer (of watch.tokens)
   * and every ERC-721 / ERC-1155 transfer (of watch.nfts) whose sender or recipient is watched. Logs
   * are checked against the block hashes read, so a reorg during the scan surfaces as
   * ChainMovedError rather than a mixed view of two forks. `finality` is not checked: the caller
   * scans up to height(finality).
   */
  async scan(from: number, to: number, watch: ScanWatch, _finality: Finality): Promise<ScannedRange> {
    const provider = this.provider;
    const lowered = new Set([...watch.addresses].map((a) => a.toLowerCase()));
    const isWatched = (a: string) => lowered.has(a.toLowerCase());
    const tokens = watch.tokens ?? [];
    const nfts = watch.nfts ?? [];
    const contracts = [...tokens, ...nfts];
    const isNft = new Set(nfts.map((a) => a.toLowerCase()));
    const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const [rawBlocks, logs] = await Promise.all([
      Promise.all(numbers.map((n) => provider.getBlock(n, true))),
      contracts.length ? provider.getLogs({ fromBlock: from, toBlock: to, address: contracts, topics: [[ERC20_TRANSFER_TOPIC, ERC1155_SINGLE_TOPIC, ERC1155_BATCH_TOPIC]] }) : Promise.resolve([]),
    ]);
    const blocks: ChainBlock[] = [];
    for (const [i, b] of rawBlocks.entries()) {
      if (!b || !b.hash) throw new ChainMovedError(`block ${numbers[i]} is not available`);
      if (i > 0 && b.parentHash !== blocks[i - 1].hash) throw new ChainMovedError(`block ${b.number} does not follow block ${b.number - 1}`);
      blocks.push({ height: b.number, hash: b.hash, parentHash: b.parentHash, timestamp: b.timestamp });
    }
    const blockAt = (n: number) => blocks[n - from];

    const transfers: ChainTransfer[] = [];
    for (const log of logs) {
      const block = blockAt(log.blockNumber);
      if (!block || block.hash !== log.blockHash) throw new ChainMovedError(`log of block ${log.blockNumber} belongs to another fork`);
      for (const moved of decodeTransferLog(log, isNft.has(log.address.toLowerCase()))) {
        if (!isWatched(moved.from) && !isWatched(moved.to)) continue;
        transfers.push({
          txId: log.transactionHash,
          position: moved.tokenId !== undefined && moved.batchIndex > 0 ? `log:${log.index}:${moved.batchIndex}` : `log:${log.index}`,
          index: log.index,
          batchIndex: moved.batchIndex,
          height: block.height,
          blockHash: block.hash,
          timestamp: block.timestamp,
          from: moved.from,
          to: moved.to,
          asset: { kind: 'token', address: ethers.getAddress(log.address) },
          amount: moved.rawValue,
          ...(moved.tokenId !== undefined ? { tokenId: moved.tokenId } : {}),
        });
      }
    }

    const native: ChainTransfer[] = [];
    const sent: { txId: string; from: string; block: ChainBlock }[] = [];
    for (const [i, b] of rawBlocks.entries()) {
      const block = blocks[i];
      for (const tx of b!.prefetchedTransactions) {
        // Whatever a watched address sent paid its fee, value or not, reverted or not.
        if (isWatched(tx.from)) sent.push({ txId: tx.hash, from: ethers.getAddress(tx.from), block });
        if (tx.value === 0n || !tx.to) continue;
        if (!isWatched(tx.from) && !isWatched(tx.to)) continue;
        native.push({ txId: tx.hash, position: 'native', index: NATIVE_TRANSFER_INDEX, batchIndex: 0, height: block.height, blockHash: block.hash, timestamp: block.timestamp, from: ethers.getAddress(tx.from), to: ethers.getAddress(tx.to), asset: { kind: 'native' }, amount: tx.value });
      }
    }
    // One receipt a transaction, of this fork: a transaction's receipt from another fork means the chain moved under the scan.
    const receipts = new Map<string, Promise<ethers.TransactionReceipt>>();
    const receiptOf = (txId: string, blockHash: string) => {
      if (!receipts.has(txId)) {
        receipts.set(txId, provider.getTransactionReceipt(txId).then((r) => (r && r.blockHash === blockHash ? r : Promise.reject(new ChainMovedError(`receipt of ${txId} belongs to another fork`)))));
      }
      return receipts.get(txId)!;
    };
    const [nativeReceipts, sentReceipts] = await Promise.all([Promise.all(native.map((t) => receiptOf(t.txId, t.blockHash))), Promise.all(sent.map((t) => receiptOf(t.txId, t.block.hash)))]);
    // A reverted transaction moves no value: keep only native transfers whose receipt says success.
    for (const [i, t] of native.entries()) if (nativeReceipts[i].status === 1) transfers.push(t);
    // `fee` counts an OP-stack rollup's L1 data fee with the gas (evm-receipts.ts).
    const fees: PaidFee[] = sent.map((t, i) => ({ txId: t.txId, from: t.from, height: t.block.height, blockHash: t.block.hash, fee: sentReceipts[i].fee }));
    return { blocks, transfers, fees };
  }

  /** The block at the height on the node's chain now, at whatever depth: a caller that needs it final compares the height with height(finality). */
  async blockHash(height: number, _finality: Finality): Promise<string | null> {
    if (height < 0) return null;
    return (await this.provider.getBlock(height))?.hash ?? null;
  }

  /** Never `none`: a height a node has no block at is one it has not reached (it is behind), whatever another node says. */
  async blockAt(height: number, finality: Finality): Promise<BlockAt> {
    const [reached, hash] = await Promise.all([this.height(finality), this.blockHash(height, finality)]);
    return hash === null || height > reached ? 'unknown' : { hash };
  }

  async blockTime(height: number): Promise<number | null> {
    return (await this.provider.getBlock(height))?.timestamp ?? null;
  }

  /** The gas of the transfer (no headroom) at the node's current max fee per gas; TransferRefused when the node says it would fail. */
  async estimateTransfer(from: string, request: TransferRequest): Promise<FeeEstimate> {
    const call = callOf(from, request);
    const [units, fees] = await Promise.all([this.provider.estimateGas({ from, ...call }).catch((e: unknown) => Promise.reject(nodeRefused(e) ? new TransferRefused(`the chain refuses this transfer from ${from}: ${shortReason(e)}`) : e)), this.provider.getFeeData()]);
    const fee = units * (fees.maxFeePerGas ?? fees.gasPrice ?? 0n);
    return { fee, accountCreation: 0n, nativeNeeded: call.value + fee, units };
  }

  /** Signs with the node's next pending nonce for the signer's address (a caller keeping its own count signs with signWithNonce). */
  async prepareTransfer(signer: ethers.Signer, request: TransferRequest): Promise<PreparedTransfer> {
    const from = await signer.getAddress();
    const call = callOf(from, request);
    const fee = await this.estimateTransfer(from, request);
    const [nonce, fees] = await Promise.all([this.pendingNonce(from), this.provider.getFeeData()]);
    const gasLimit = (fee.units! * GAS_LIMIT_HEADROOM) / 100n;
    const signed = await this.signWithNonce(signer, { nonce, gasLimit, fees: { maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }, call });
    return { txId: signed.txHash, raw: signed.raw, validThrough: null, validFrom: null, nonce: { from, value: nonce }, fee };
  }

  /** Sends it again; TransferRefused when the node refuses it for good (funds short, ...). A nonce taken by another transaction is for outcome() to tell. */
  async broadcast(prepared: PreparedTransfer): Promise<void> {
    const outcome = await this.broadcastLine(signedLineOf(prepared), prepared.raw);
    if (outcome.kind === 'refused') throw new TransferRefused(`the transfer was refused: ${outcome.reason}`);
    if (outcome.kind === 'retry') throw new Error(`broadcast failed: ${outcome.reason}`);
  }

  async outcome(prepared: PreparedTransfer): Promise<TransferOutcome> {
    const fate = await this.lineFate(signedLineOf(prepared));
    if (fate.kind === 'taken') return { state: 'expired' };
    if (fate.kind === 'open' || fate.kind === 'undecided') return { state: 'pending' };
    const receipt = fate.receipt;
    const depth = (await this.provider.getBlockNumber()) - receipt.blockNumber + 1;
    const failed = receipt.status !== 1;
    return { state: 'landed', height: receipt.blockNumber, finality: depth >= this.confirmations ? 'final' : 'seen', failed, ...(failed ? { error: 'the transaction reverted on chain' } : {}) };
  }

  /** Signs an EIP-1559 transaction with the caller's nonce, gas limit and fees. */
  async signWithNonce(signer: ethers.Signer, tx: { nonce: number; gasLimit: bigint; fees: Eip1559Fees; call: CallRequest }): Promise<SignedTransaction> {
    const signed = ethers.Transaction.from(
      await signer.signTransaction({ type: 2, chainId: this.chainId, nonce: tx.nonce, gasLimit: tx.gasLimit, maxFeePerGas: tx.fees.maxFeePerGas, maxPriorityFeePerGas: tx.fees.maxPriorityFeePerGas, ...tx.call }),
    );
    return { txHash: signed.hash!, raw: signed.serialized };
  }

  /** The gas a call needs, with the headroom it is signed with; TransferRefused when the node says it would fail (any other error: it did not answer). */
  async gasLimit(from: string, call: CallRequest): Promise<bigint> {
    const units = await this.provider.estimateGas({ from, ...call }).catch((e: unknown) => Promise.reject(nodeRefused(e) ? new TransferRefused(shortReason(e)) : e));
    return (units * GAS_LIMIT_HEADROOM) / 100n;
  }

  /** The fees a new transaction is signed with: the node's max fee and tip. */
  async fees(): Promise<Eip1559Fees> {
    const fees = await this.provider.getFeeData();
    return { maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! };
  }

  /** The address's next nonce counting its pending transactions. */
  pendingNonce(address: string): Promise<number> {
    return this.provider.getTransactionCount(address, 'pending');
  }

  broadcastLine(line: SignedLine, raw: string): Promise<BroadcastOutcome> {
    return broadcastLine(this.provider, this.confirmations, line, raw);
  }

  lineFate(line: SignedLine): Promise<NonceFate> {
    return nonceFate(this.provider, this.confirmations, line);
  }

  nodeKnowsAny(line: SignedLine): Promise<boolean> {
    return nodeKnowsAny(this.provider, line);
  }

  /** Whether the node holds this transaction (pending or mined). */
  async knows(txHash: string): Promise<boolean> {
    return (await this.provider.getTransaction(txHash)) !== null;
  }

  /** Offers signed bytes again (the same nonce: harmless if they were mined). */
  async rebroadcast(raw: string): Promise<void> {
    await this.provider.broadcastTransaction(raw);
  }

  bumpedFees(old: Eip1559Fees, percent: number): Promise<Eip1559Fees | null> {
    return bumpedFees(this.provider, old, percent);
  }

  replacementFees(line: SignedLine, recorded: Eip1559Fees, percent: number): Promise<Eip1559Fees> {
    return replacementFees(this.provider, line, recorded, percent);
  }
}

/** Checksummed, or null when `text` is not an EVM address (a mixed-case one with a bad checksum included). */
export function checksummed(text: string): string | null {
  if (typeof text !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(text)) return null;
  try {
    return ethers.getAddress(text);
  } catch {
    return null;
  }
}

/** The owner's balance of each asset (native or ERC20), in the smallest unit, read in parallel. */
export async function readBalances(provider: ethers.Provider, owner: string, assets: { isNative: boolean; address: string }[]): Promise<bigint[]> {
  return Promise.all(
    assets.map((a) => (a.isNative ? provider.getBalance(owner) : (new ethers.Contract(a.address, erc20Reader, provider).balanceOf(owner) as Promise<bigint>))),
  );
}

export interface TokenFacts {
  symbol: string;
  name: string;
  decimals: number;
}

/**
 * What an unregistered token says about itself; null when the node answers that the address is not
 * an ERC20 (a call it refuses or cannot decode). A node that does not answer throws.
 */
export async function readTokenFacts(provider: ethers.Provider, address: string): Promise<TokenFacts | null> {
  const token = new ethers.Contract(address, erc20Reader, provider);
  try {
    const [symbol, name, decimals] = await Promise.all([token.symbol() as Promise<string>, token.name() as Promise<string>, token.decimals() as Promise<bigint>]);
    return { symbol, name, decimals: Number(decimals) };
  } catch (e) {
    if (nodeRefused(e) || (e as { code?: string }).code === 'BAD_DATA') return null;
    throw e;
  }
}

function callOf(from: string, request: TransferRequest): CallRequest {
  const asset = request.asset;
  if (asset.kind === 'native') return transactionRequest({ isNative: true, address: '' }, request.to, request.amount);
  if (asset.kind === 'token') return transactionRequest({ isNative: false, address: asset.address }, request.to, request.amount);
  return transactionRequest({ isNative: false, address: asset.address, standard: asset.standard }, request.to, request.amount, { from, tokenId: asset.tokenId });
}

function signedLineOf(prepared: PreparedTransfer): SignedLine {
  return { fromAddress: prepared.nonce?.from ?? '', nonce: prepared.nonce ? String(prepared.nonce.value) : null, txHash: prepared.txId, replacedTxHashes: [] };
}

type MovedValue = { from: string; to: string; rawValue: bigint; tokenId?: bigint; batchIndex: number };
const topicAddress = (topic: string) => ethers.getAddress(ethers.dataSlice(topic, 12));

/**
 * What one log of a token contract moved: an ERC-20 Transfer (three topics, one word of data), an
 * ERC-721 Transfer (the same signature with the token id indexed: four topics, no data), or an
 * ERC-1155 TransferSingle / TransferBatch (one entry per id of the batch). A log of another shape,
 * an amount of zero, or an NFT event from a contract registered as ERC-20 (and the reverse), moves
 * nothing Keel counts.
 */
export function decodeTransferLog(log: { topics: readonly string[]; data: string }, nftCollection: boolean): MovedValue[] {
  const [topic] = log.topics;
  if (topic === ERC20_TRANSFER_TOPIC) {
    if (!nftCollection && log.topics.length === 3 && log.data.length === 66) {
      // Anyone may transfer 0 of a token to any address: it moves nothing, so it is not a deposit.
      const rawValue = BigInt(log.data);
      return rawValue > 0n ? [{ from: topicAddress(log.topics[1]), to: topicAddress(log.topics[2]), rawValue, batchIndex: 0 }] : [];
    }
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
