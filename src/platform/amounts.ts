import { ethers } from 'ethers';

/** Base units as a plain decimal string in whole units: 1500000n, 6 → "1.5"; 0n → "0" (never "1.0"). */
export function formatAmount(raw: bigint, decimals: number): string {
  const text = ethers.formatUnits(raw, decimals);
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}
