import type { ethers } from 'ethers';

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
  const [latest, fees] = await Promise.all([provider.getBlock('latest'), provider.getFeeData()]);
  const baseFee = latest?.baseFeePerGas ?? 0n;
  if (old.maxFeePerGas >= baseFee + old.maxPriorityFeePerGas) return null;
  const raise = (v: bigint) => (v * BigInt(100 + percent) + 99n) / 100n;
  const tip = max(raise(old.maxPriorityFeePerGas), fees.maxPriorityFeePerGas ?? 0n);
  return { maxPriorityFeePerGas: tip, maxFeePerGas: max(raise(old.maxFeePerGas), 2n * baseFee + tip) };
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
