/**
 * Fee on a notional (ticks × lots) at a rate in parts per million, rounded up to a whole unit in
 * the venue's favour, computed without overflowing 2^53 for any safe notional.
 */
export function feeFor(notional: number, ppm: number): number {
  if (ppm === 0) return 0;
  const whole = Math.floor(notional / 1_000_000) * ppm;
  return whole + Math.ceil(((notional % 1_000_000) * ppm) / 1_000_000);
}

/** feeFor on bigints, for sums of notionals that may pass 2^53 (the same rounding: up, in the venue's favour). */
export function feeCeil(notional: bigint, ppm: number): bigint {
  return (notional * BigInt(ppm) + 999_999n) / 1_000_000n;
}
