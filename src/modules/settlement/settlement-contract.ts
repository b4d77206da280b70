import { ethers } from 'ethers';
import { loadArtifact } from '../../platform/chain/artifacts';
import { nodeRefused, shortReason } from '../../platform/chain-port/evm-transactions';

/** The native coin in the contract's balances. */
export const NATIVE_TOKEN = ethers.ZeroAddress;

export function settlementInterface(): ethers.Interface {
  return new ethers.Interface(loadArtifact('KeelSettlement').abi);
}

/** Blocks one log request covers (nodes commonly cap a request at a few thousand). */
const LOG_SCAN_BLOCKS = 2_000;

/** The contract's logs that match `filter` in blocks `from` to `to`, read LOG_SCAN_BLOCKS at a time. */
export async function contractLogs(contract: ethers.Contract, filter: ethers.DeferredTopicFilter, from: number, to: number): Promise<ethers.EventLog[]> {
  const found: ethers.EventLog[] = [];
  for (; from <= to; from += LOG_SCAN_BLOCKS) found.push(...((await contract.queryFilter(filter, from, Math.min(from + LOG_SCAN_BLOCKS - 1, to))) as ethers.EventLog[]));
  return found;
}

/** The contract version (its VERSION) whose settle calldata this module writes. */
export const SETTLEMENT_CONTRACT_VERSION = 2n;

/** The VERSION of the settlement contract at `address`, or 0 for a contract from before versions (it has none). */
export async function contractVersion(provider: ethers.Provider, address: string): Promise<bigint> {
  try {
    return (await new ethers.Contract(address, settlementInterface(), provider).VERSION()) as bigint;
  } catch (e) {
    if (isDefinitiveRefusal(e) || (e as { code?: string }).code === 'BAD_DATA') return 0n;
    throw e;
  }
}

/** A netted change of one account's balance of one token in the contract. */
export interface ChainDelta {
  account: string;
  token: string;
  amount: bigint;
}

/**
 * Trade keys as the contract reads them: runs of consecutive keys, 12 bytes each (uint64 first
 * key, uint32 count, big-endian). Keys are sorted and deduplicated first.
 */
export function packTradeKeys(keys: readonly bigint[]): string {
  const sorted = [...new Set(keys)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const runs: [bigint, number][] = [];
  for (const k of sorted) {
    const last = runs[runs.length - 1];
    if (last && last[0] + BigInt(last[1]) === k && last[1] < 0xffffffff) last[1] += 1;
    else runs.push([k, 1]);
  }
  return ethers.concat(runs.flatMap(([first, count]) => [ethers.toBeHex(first, 8), ethers.toBeHex(count, 4)]));
}

/** The batch id as the contract's bytes16. */
export function batchIdBytes(batchId: string): string {
  return `0x${batchId.replace(/-/g, '')}`;
}

const INT128_MAX = (1n << 127n) - 1n;

/** A change as the contract reads it: 16 bytes, sign-magnitude (top bit set: a debit). */
function signMagnitude(amount: bigint): string {
  if (amount > INT128_MAX || amount < -INT128_MAX) throw new Error(`a delta of ${amount} does not fit the contract's 128-bit changes`);
  return ethers.toBeHex(amount < 0n ? (1n << 127n) | -amount : amount, 16);
}

/**
 * Where the contract keeps a batch's tokens: each token's index (the native coin is 0) and, per
 * balance slot k, the two tokens it names (at 2k and 2k+1; the zero address while 2k+1 has none).
 */
export interface TokenSlots {
  indices: ReadonlyMap<string, number>;
  pairs: ReadonlyMap<number, [string, string]>;
}

/**
 * Deltas as the contract reads them: per balance slot k (slots ascending), the slot's two tokens
 * (20 bytes each), a count (uint16) and that many records of (account 20 bytes, the change of the
 * token at 2k, the change of the token at 2k+1), one record per account and slot. A slot with more
 * than 65,535 accounts continues in a second group, which the contract refuses (slots strictly
 * ascending): batches are far smaller.
 */
export function packDeltas(deltas: ChainDelta[], where: TokenSlots): string {
  const slots = new Map<number, Map<string, [bigint, bigint]>>();
  for (const d of deltas) {
    const index = where.indices.get(ethers.getAddress(d.token));
    if (index === undefined) throw new Error(`token ${d.token} has no index in the settlement contract`);
    const slot = index >> 1;
    if (!slots.has(slot)) slots.set(slot, new Map());
    const accounts = slots.get(slot)!;
    const account = ethers.getAddress(d.account);
    const pair = accounts.get(account) ?? [0n, 0n];
    pair[index & 1] += d.amount;
    accounts.set(account, pair);
  }
  const parts: string[] = [];
  for (const slot of [...slots.keys()].sort((a, b) => a - b)) {
    const tokens = where.pairs.get(slot);
    if (!tokens) throw new Error(`the tokens of balance slot ${slot} are not known`);
    const records = [...slots.get(slot)!].sort(([a], [b]) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
    parts.push(tokens[0], tokens[1], ethers.toBeHex(records.length, 2));
    for (const [account, [low, high]] of records) parts.push(account, signMagnitude(low), signMagnitude(high));
  }
  return parts.length ? ethers.concat(parts) : '0x';
}

export function settleCalldata(batchId: string, tradeKeys: readonly bigint[], deltas: ChainDelta[], where: TokenSlots): string {
  return settlementInterface().encodeFunctionData('settle', [batchIdBytes(batchId), packTradeKeys(tradeKeys), packDeltas(deltas, where)]);
}

/**
 * The indices and slot pairs of `tokens` in the settlement contract at `contract`, read from it
 * (the contract checks the pairs a batch names, so a stale read fails the batch, never moves the
 * wrong token). A token the contract has never received has no index: missing from `indices`.
 */
export async function readTokenSlots(provider: ethers.Provider, contract: string, tokens: Iterable<string>): Promise<TokenSlots> {
  const settlement = new ethers.Contract(contract, settlementInterface(), provider);
  const indices = new Map<string, number>();
  for (const token of new Set([...tokens].map((t) => ethers.getAddress(t)))) {
    const index = token === NATIVE_TOKEN ? 0 : Number(await settlement.tokenIndex(token));
    if (token === NATIVE_TOKEN || index !== 0) indices.set(token, index);
  }
  const pairs = new Map<number, [string, string]>();
  for (const slot of new Set([...indices.values()].map((i) => i >> 1))) {
    const [low, high] = await Promise.all([settlement.tokenAt(2 * slot), settlement.tokenAt(2 * slot + 1)]);
    pairs.set(slot, [ethers.getAddress(low), ethers.getAddress(high)]);
  }
  return { indices, pairs };
}

/** A withdrawal from an account's trading balance in the contract, as the account signs it. */
export interface ChainWithdrawal {
  /** Keel's withdrawal key (trading_transfers.withdrawal_key, a sequence): the contract pays each key once. */
  key: bigint;
  account: string;
  token: string;
  amount: bigint;
  to: string;
}

const WITHDRAWAL_TYPES = {
  Withdrawal: [
    { name: 'key', type: 'uint64' },
    { name: 'account', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
    { name: 'to', type: 'address' },
  ],
};

/** The account's EIP-712 signature of a withdrawal from the contract at `contract` on chain `chainId`. */
export function signWithdrawal(signer: ethers.Signer, contract: string, chainId: number | bigint, w: ChainWithdrawal): Promise<string> {
  return signer.signTypedData({ name: 'KeelSettlement', version: '1', chainId, verifyingContract: contract }, WITHDRAWAL_TYPES, w);
}

/** The operator's call paying out signed withdrawals. */
export function withdrawCalldata(signed: { withdrawal: ChainWithdrawal; signature: string }[]): string {
  return settlementInterface().encodeFunctionData('withdraw', [
    signed.map(({ withdrawal: w }) => [w.key, w.account, w.token, w.amount, w.to]),
    signed.map((s) => s.signature),
  ]);
}

/** The contract's custom error in a failed call or transaction, as readable text; else the chain's words (shortReason). */
export function revertReason(e: unknown): string {
  const err = e as { data?: string; info?: { error?: { data?: string | { data?: string } } } };
  const nested = err.info?.error?.data;
  const data = typeof err.data === 'string' ? err.data : typeof nested === 'string' ? nested : nested?.data;
  if (data && data !== '0x') {
    try {
      const parsed = settlementInterface().parseError(data);
      if (parsed) return `${parsed.name}(${parsed.args.map((a) => String(a)).join(', ')})`;
    } catch {
      // not one of ours
    }
  }
  return shortReason(e);
}

/**
 * Whether a failed call or transaction was the chain refusing it for good (a revert, or a sender
 * without the funds to pay), rather than trouble reaching the node or an error of the node's own (a
 * node behind, a rate limit: worth trying again). ethers names every error answer to an estimate
 * CALL_EXCEPTION, so the node's words decide (the chain port's nodeRefused).
 */
export function isDefinitiveRefusal(e: unknown): boolean {
  return nodeRefused(e);
}

/** Deploys KeelSettlement from `signer`; its address and deployment hash once mined. */
export async function deploySettlementContract(
  signer: ethers.Signer,
  params: { operator: string; feeRecipient: string; exitDelaySeconds: number },
): Promise<{ address: string; txHash: string }> {
  const { abi, bytecode } = loadArtifact('KeelSettlement');
  const factory = new ethers.ContractFactory(abi, bytecode, signer);
  const contract = await factory.deploy(params.operator, params.feeRecipient, params.exitDelaySeconds);
  const receipt = await contract.deploymentTransaction()!.wait();
  return { address: await contract.getAddress(), txHash: receipt!.hash };
}
