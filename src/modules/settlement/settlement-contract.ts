import { ethers } from 'ethers';
import { loadArtifact } from '../../platform/chain/artifacts';

/** The native coin in the contract's balances. */
export const NATIVE_TOKEN = ethers.ZeroAddress;

export function settlementInterface(): ethers.Interface {
  return new ethers.Interface(loadArtifact('KeelSettlement').abi);
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

/** Deltas in the order the contract requires: grouped by token, tokens ascending. */
export function sortDeltas(deltas: ChainDelta[]): ChainDelta[] {
  const num = (a: string) => BigInt(a);
  return [...deltas].sort((a, b) => {
    const ta = num(a.token);
    const tb = num(b.token);
    if (ta !== tb) return ta < tb ? -1 : 1;
    return a.account.toLowerCase() < b.account.toLowerCase() ? -1 : 1;
  });
}

const INT128_MAX = (1n << 127n) - 1n;

/**
 * Deltas as the contract reads them: per token (ascending), the token (20 bytes), a count (uint16)
 * and that many (account 20 bytes, amount int128 big-endian). A token with more than 65,535
 * deltas continues in a second group, which the contract refuses (tokens strictly ascending):
 * batches are far smaller.
 */
export function packDeltas(deltas: ChainDelta[]): string {
  const groups = new Map<string, ChainDelta[]>();
  for (const d of sortDeltas(deltas)) {
    const token = ethers.getAddress(d.token);
    if (!groups.has(token)) groups.set(token, []);
    groups.get(token)!.push(d);
  }
  const parts: string[] = [];
  for (const [token, list] of groups) {
    parts.push(token, ethers.toBeHex(list.length, 2));
    for (const d of list) {
      if (d.amount > INT128_MAX || d.amount < -INT128_MAX) throw new Error(`a delta of ${d.amount} does not fit the contract's int128`);
      parts.push(ethers.getAddress(d.account), ethers.toBeHex(BigInt.asUintN(128, d.amount), 16));
    }
  }
  return parts.length ? ethers.concat(parts) : '0x';
}

export function settleCalldata(batchId: string, tradeKeys: readonly bigint[], deltas: ChainDelta[]): string {
  return settlementInterface().encodeFunctionData('settle', [batchIdBytes(batchId), packTradeKeys(tradeKeys), packDeltas(deltas)]);
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

/** The contract's custom error in a failed call or transaction, as readable text. */
export function revertReason(e: unknown): string {
  const err = e as { data?: string; info?: { error?: { data?: string | { data?: string }; message?: string } }; shortMessage?: string; message?: string };
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
  return (err.info?.error?.message ?? err.shortMessage ?? err.message ?? String(e)).slice(0, 300);
}

/**
 * Whether a failed call or transaction was the chain refusing it for good (a revert, or a sender
 * without the funds to pay), rather than trouble reaching the node (worth trying again).
 */
export function isDefinitiveRefusal(e: unknown): boolean {
  const err = e as { code?: string; data?: string; info?: { error?: { message?: string } }; shortMessage?: string; message?: string };
  if (err.code === 'CALL_EXCEPTION' || err.code === 'INSUFFICIENT_FUNDS') return true;
  const text = [err.info?.error?.message, err.shortMessage, err.message].filter(Boolean).join(' ');
  return /revert|insufficient funds/i.test(text);
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
