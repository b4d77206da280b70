/**
 * EVM transactions as Keel's nonce-based sender needs them (behind EvmChain, issue 35): the call that
 * moves an asset, what the chain says about a line's nonce, broadcasting signed bytes again safely,
 * and the fees a stuck transaction is re-signed with. The sender's queueing (which line, which nonce,
 * when to bump) stays with the sender (withdrawals/transaction-sender.ts).
 */
import { ethers } from 'ethers';
import { withUrlsAsOrigins } from '../net/rpc-url';

const erc20 = new ethers.Interface(['function transfer(address to, uint256 amount) returns (bool)']);
const nfts = new ethers.Interface([
  'function safeTransferFrom(address from, address to, uint256 tokenId)',
  'function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)',
]);

/** What moves an NFT: the sending address and the token id (the asset's standard says which call). */
export interface NftMove {
  from: string;
  tokenId: bigint;
}

/** A call to sign: its target, value and data. */
export interface CallRequest {
  to: string;
  value: bigint;
  data: string;
}

/**
 * The call that moves `rawAmount` of an asset to `recipient`: a value transfer, ERC-20 transfer(),
 * or for an NFT collection safeTransferFrom (ERC-721 the token; ERC-1155 `rawAmount` of the id).
 */
export function transactionRequest(asset: { isNative: boolean; address: string; standard?: string }, recipient: string, rawAmount: bigint, nft?: NftMove): CallRequest {
  if (asset.isNative) return { to: recipient, value: rawAmount, data: '0x' };
  if (nft && asset.standard === 'ERC721') return { to: asset.address, value: 0n, data: nfts.encodeFunctionData('safeTransferFrom(address,address,uint256)', [nft.from, recipient, nft.tokenId]) };
  if (nft && asset.standard === 'ERC1155') return { to: asset.address, value: 0n, data: nfts.encodeFunctionData('safeTransferFrom(address,address,uint256,uint256,bytes)', [nft.from, recipient, nft.tokenId, rawAmount, '0x']) };
  if (nft) throw new Error(`transactionRequest: ${asset.address} is not an NFT collection`);
  return { to: asset.address, value: 0n, data: erc20.encodeFunctionData('transfer', [recipient, rawAmount]) };
}

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
 *   the line's (`by`, seen in its block), so none of them can ever be mined;
 * - `undecided`: the nonce is used at that depth, but the node did not show by which transaction
 *   (`reason`): the line waits, as one of its own may be the one;
 * - `open`: anything else (unused, or used by a transaction not yet final): one of the line's
 *   transactions may still be mined, so the line must keep following its hashes.
 */
export type NonceFate = { kind: 'mined'; receipt: ethers.TransactionReceipt } | { kind: 'taken'; by: string } | { kind: 'undecided'; reason: string } | { kind: 'open' };

/** Every hash signed for the line, oldest first. */
export function lineHashes(line: SignedLine): string[] {
  return [...new Set([...line.replacedTxHashes, line.txHash].filter((h): h is string => !!h))];
}

/**
 * A count of the sender's transactions past the nonce is not enough to call it taken: behind a load
 * balancer the count may come from a node that has the block where the line's own transaction was
 * mined and the receipt lookups from one that has not. So `taken` only once the transaction that
 * used the nonce is seen, in its block, and is none of the line's.
 */
export async function nonceFate(provider: ethers.Provider, confirmations: number, line: SignedLine): Promise<NonceFate> {
  const mined = await receiptOf(provider, line);
  if (mined) return { kind: 'mined', receipt: mined };
  if (line.nonce === null) return { kind: 'open' };
  const nonce = Number(line.nonce);
  const finalBlock = (await provider.getBlockNumber()) - confirmations + 1;
  if (finalBlock < 0 || (await provider.getTransactionCount(line.fromAddress, finalBlock)) <= nonce) return { kind: 'open' };
  const user = await transactionAtNonce(provider, line.fromAddress, nonce, finalBlock);
  if ('unseen' in user) return { kind: 'undecided', reason: user.unseen };
  const ours = lineHashes(line).some((h) => h.toLowerCase() === user.tx.hash.toLowerCase());
  if (!ours) return { kind: 'taken', by: user.tx.hash };
  const receipt = await provider.getTransactionReceipt(user.tx.hash);
  return receipt ? { kind: 'mined', receipt } : { kind: 'undecided', reason: `its transaction ${user.tx.hash} is in block ${user.tx.blockNumber}, but the node shows no receipt of it yet` };
}

/**
 * The sender's transaction with `nonce`, mined at or below `usedBy` (a block whose count already
 * passed the nonce), or why the node did not show it (a block or a past state it does not have).
 */
async function transactionAtNonce(provider: ethers.Provider, from: string, nonce: number, usedBy: number): Promise<{ tx: ethers.TransactionResponse } | { unseen: string }> {
  try {
    const height = await blockUsingNonce(provider, from, nonce, usedBy);
    const block = await provider.getBlock(height, true);
    if (!block) return { unseen: `block ${height}, where nonce ${nonce} was used, is not available` };
    const tx = block.prefetchedTransactions.find((t) => t.from.toLowerCase() === from.toLowerCase() && t.nonce === nonce);
    return tx ? { tx } : { unseen: `block ${height} holds no transaction of ${from} with nonce ${nonce}` };
  } catch (e) {
    return { unseen: `the node did not show where nonce ${nonce} was used: ${shortReason(e)}` };
  }
}

/**
 * The block in which the sender's count of transactions passed `nonce`, searched back from `usedBy`
 * with steps doubling, then halved: a nonce used lately, as a sender checking each step finds it,
 * costs a few reads of the count.
 */
async function blockUsingNonce(provider: ethers.Provider, from: string, nonce: number, usedBy: number): Promise<number> {
  const used = async (block: number) => (await provider.getTransactionCount(from, block)) > nonce;
  let usedAt = usedBy;
  let unused = usedBy - 1; // -1: before the first block, where nothing is used
  for (let step = 2; unused >= 0 && (await used(unused)); step *= 2) {
    usedAt = unused;
    unused = Math.max(-1, usedAt - step);
  }
  while (usedAt - unused > 1) {
    const middle = Math.floor((unused + usedAt) / 2);
    if (await used(middle)) usedAt = middle;
    else unused = middle;
  }
  return usedAt;
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

/**
 * What broadcasting a recorded, signed transaction came to:
 * - `accepted`: the node holds it (just now or before), or its nonce is used by a transaction not
 *   yet final or not yet shown (maybe ours): follow it;
 * - `taken`: its nonce is used for good by a transaction seen to be none of the line's (see nonceFate);
 * - `refused`: the node refuses it for good (no coin for gas, a block gas limit);
 * - `retry`: anything else (the node unreachable): offer the same bytes again later.
 */
export type BroadcastOutcome = { kind: 'accepted' } | { kind: 'taken'; by: string } | { kind: 'refused'; reason: string } | { kind: 'retry'; reason: string };

/** Broadcasts a line's signed transaction; safe to repeat (the same bytes, the same nonce). */
export async function broadcastLine(provider: ethers.Provider, confirmations: number, line: SignedLine, rawTx: string): Promise<BroadcastOutcome> {
  try {
    await provider.broadcastTransaction(rawTx);
    return { kind: 'accepted' };
  } catch (e) {
    if (/already known|known transaction|already imported/i.test(messageOf(e))) return { kind: 'accepted' };
    if (isNonceTaken(e)) {
      const fate = await nonceFate(provider, confirmations, line);
      return fate.kind === 'taken' ? fate : { kind: 'accepted' };
    }
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

/**
 * An error, a chain's above all, as one short line fit for a log or a stored reason: the node's own
 * words, ethers' short message or the message, with every URL cut to its origin (an RPC URL's path,
 * query or user info may hold the provider's key, and ethers' messages quote the URL).
 */
export function shortReason(e: unknown): string {
  const err = e as { shortMessage?: string; message?: string };
  return withUrlsAsOrigins(nodeMessage(e) ?? err.shortMessage ?? err.message ?? String(e)).slice(0, 300);
}

function isNonceTaken(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'NONCE_EXPIRED' || code === 'REPLACEMENT_UNDERPRICED' || /nonce too low|replacement transaction underpriced/i.test(messageOf(e));
}

/**
 * A call (a gas estimate) the node answered saying it would fail: it reverts, the sender lacks the
 * coin, no block allows its gas. Any other error says nothing about the call and it may go through
 * later: one that never reached the node or got no answer (a timeout, a refused connection, an HTTP
 * error), or an error of the node's own (a node behind without the block, "header not found"; a
 * rate limit; an internal error; its own timeout). ethers names every error answer to a call or an
 * estimate CALL_EXCEPTION, so that name alone is no refusal.
 */
export function nodeRefused(e: unknown): boolean {
  return !nodeUnanswered(e) && isDefinitive(e);
}

const UNANSWERED = new Set(['TIMEOUT', 'NETWORK_ERROR', 'SERVER_ERROR', 'CANCELLED']);

/** ethers' word for a request the node did not answer: a timeout, a network or HTTP error, a cancelled request. */
export function nodeUnanswered(e: unknown): boolean {
  return UNANSWERED.has((e as { code?: string } | null)?.code ?? '');
}

/**
 * How nodes say a transaction would fail, geth's and Hardhat's words among them: a revert (ethers
 * says "execution reverted" too when the node gave revert data), no coin for gas, a gas limit no
 * block allows, out of gas.
 */
const WOULD_FAIL = /execution reverted|transaction reverted|reverted with|VM Exception|invalid opcode|out of gas|insufficient funds|doesn't have enough funds|exceeds block gas limit|intrinsic gas too low|gas required exceeds allowance/i;

/**
 * The node answered that the transaction cannot go through, as opposed to not answering or
 * answering an error of its own (a timeout, a rate limit, a node behind), which says nothing about
 * the transaction and is tried again.
 */
function isDefinitive(e: unknown): boolean {
  return (e as { code?: string }).code === 'INSUFFICIENT_FUNDS' || WOULD_FAIL.test(messageOf(e));
}
export interface Eip1559Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * The fees to re-sign a stuck transaction with, or null when it is priced at the market (it only
 * needs patience). Both caps rise by at least `percent` (nodes require 10% to replace), the tip to
 * at least the market's and the cap to at least twice the latest base fee plus the tip.
 */
export async function bumpedFees(provider: ethers.Provider, old: Eip1559Fees, percent: number): Promise<Eip1559Fees | null> {
  const market = await marketFees(provider);
  if (old.maxFeePerGas >= market.baseFee + old.maxPriorityFeePerGas) return null;
  return raisedFees(market, old, percent);
}

/**
 * The fees a transaction must be signed with to take the place of whichever of the line's is pending
 * at its nonce, priced at the market or not (a cancellation): the highest caps among `recorded` and
 * the line's transactions the node holds (a bump only watched may be dearer than the one in force),
 * raised as bumpedFees raises them.
 */
export async function replacementFees(provider: ethers.Provider, line: SignedLine, recorded: Eip1559Fees, percent: number): Promise<Eip1559Fees> {
  const [market, held] = await Promise.all([marketFees(provider), Promise.all(lineHashes(line).map((h) => provider.getTransaction(h)))]);
  const highest = held.reduce<Eip1559Fees>((m, t) => (t ? { maxFeePerGas: max(m.maxFeePerGas, t.maxFeePerGas ?? 0n), maxPriorityFeePerGas: max(m.maxPriorityFeePerGas, t.maxPriorityFeePerGas ?? 0n) } : m), recorded);
  return raisedFees(market, highest, percent);
}

async function marketFees(provider: ethers.Provider): Promise<{ baseFee: bigint; tip: bigint }> {
  const [latest, fees] = await Promise.all([provider.getBlock('latest'), provider.getFeeData()]);
  return { baseFee: latest?.baseFeePerGas ?? 0n, tip: fees.maxPriorityFeePerGas ?? 0n };
}

function raisedFees(market: { baseFee: bigint; tip: bigint }, old: Eip1559Fees, percent: number): Eip1559Fees {
  const raise = (v: bigint) => (v * BigInt(100 + percent) + 99n) / 100n;
  const tip = max(raise(old.maxPriorityFeePerGas), market.tip);
  return { maxPriorityFeePerGas: tip, maxFeePerGas: max(raise(old.maxFeePerGas), 2n * market.baseFee + tip) };
}

/** What takes a line's place when it is cancelled: nothing sent, to the sender itself. */
export function cancellationCall(fromAddress: string): CallRequest {
  return { to: fromAddress, value: 0n, data: '0x' };
}

/** A plain send's gas on Ethereum: a cancellation's limit when the node does not estimate one (some chains charge more). */
export const CANCELLATION_GAS_LIMIT = 21_000n;

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
