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

/** Trade keys as the contract reads them: 8 bytes each, big-endian. */
export function packTradeKeys(keys: readonly bigint[]): string {
  return ethers.concat(keys.map((k) => ethers.toBeHex(k, 8)));
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

export function settleCalldata(batchId: string, tradeKeys: readonly bigint[], deltas: ChainDelta[]): string {
  return settlementInterface().encodeFunctionData('settle', [batchIdBytes(batchId), packTradeKeys(tradeKeys), sortDeltas(deltas).map((d) => [d.account, d.token, d.amount])]);
}

/** A withdrawal from an account's trading balance in the contract, as the account signs it. */
export interface ChainWithdrawal {
  /** Keel's withdrawal id (a uuid): the contract pays each id once. */
  id: string;
  account: string;
  token: string;
  amount: bigint;
  to: string;
}

const WITHDRAWAL_TYPES = {
  Withdrawal: [
    { name: 'id', type: 'bytes16' },
    { name: 'account', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
    { name: 'to', type: 'address' },
  ],
};

/** The account's EIP-712 signature of a withdrawal from the contract at `contract` on chain `chainId`. */
export function signWithdrawal(signer: ethers.Signer, contract: string, chainId: number | bigint, w: ChainWithdrawal): Promise<string> {
  return signer.signTypedData({ name: 'KeelSettlement', version: '1', chainId, verifyingContract: contract }, WITHDRAWAL_TYPES, { ...w, id: batchIdBytes(w.id) });
}

/** The operator's call paying out signed withdrawals. */
export function withdrawCalldata(signed: { withdrawal: ChainWithdrawal; signature: string }[]): string {
  return settlementInterface().encodeFunctionData('withdraw', [
    signed.map(({ withdrawal: w }) => [batchIdBytes(w.id), w.account, w.token, w.amount, w.to]),
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
