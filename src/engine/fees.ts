/**
 * The fee on an amount of the quote asset (base units) at a rate in parts per million, rounded up
 * to a whole base unit in the venue's favour: never more than the rate's share plus one base unit.
 */
export function feeCeil(amount: bigint, ppm: number): bigint {
  return (amount * BigInt(ppm) + 999_999n) / 1_000_000n;
}
