import { ethers } from 'ethers';
import { bumpedFees } from '../../platform/chain-port/evm-transactions';
import type { SettlementDeployment } from './settlement-deployments';

export interface FeeBumpOptions {
  /** How long an operator transaction waits unmined before its fee is looked at. */
  bumpAfterMs: number;
  /** How much a bump raises the fee caps, at least (the market may ask more). */
  bumpPercent: number;
}

/**
 * An operator transaction (a settlement batch, a payout of withdrawals from trading) that has waited
 * longer than `bumpAfterMs` with a fee below the market's (the base fee rose past its cap): the same
 * call signed again at the same nonce with higher fees, to take its place (either may be mined,
 * never both: the caller keeps every hash). Null while it has not waited that long or its fee is
 * still enough.
 */
export async function feeBumped(d: SettlementDeployment, sent: { rawTx: string; submittedAt: Date | string }, options: FeeBumpOptions): Promise<ethers.Transaction | null> {
  if (Date.now() - new Date(sent.submittedAt).getTime() <= options.bumpAfterMs) return null;
  const old = ethers.Transaction.from(sent.rawTx);
  const bumped = await bumpedFees(d.network.provider, { maxFeePerGas: old.maxFeePerGas!, maxPriorityFeePerGas: old.maxPriorityFeePerGas! }, options.bumpPercent);
  if (!bumped) return null;
  return ethers.Transaction.from(await d.operator.signTransaction({ type: 2, chainId: d.network.spec.chainId, nonce: old.nonce, to: old.to, data: old.data, gasLimit: old.gasLimit, ...bumped }));
}
