/**
 * The checks that keep a swap to the price its owner expects: pure, on base units, with refusal
 * codes the swap service and the settlement executor word.
 */
import { parseDecimal, pow10 } from '../../platform/decimal';

export type SwapRefusal =
  /** The caller's minimumOutput is above what the pools give now. */
  | 'BELOW_CALLER_MINIMUM'
  /** The route's price impact is above the cap (the default or the caller's maxPriceImpact). */
  | 'PRICE_IMPACT_TOO_HIGH';

/** The floor the router is given: the stricter of the slippage tolerance's and the caller's own. */
export function swapFloor(slippageFloor: bigint, callerMinimum: bigint | null): bigint {
  return callerMinimum !== null && callerMinimum > slippageFloor ? callerMinimum : slippageFloor;
}

/** Why a priced swap may not be queued, or null. Impact in parts per million, the cap in basis points. */
export function swapRefusal(expectedOutput: bigint, callerMinimum: bigint | null, priceImpactPpm: bigint, maxImpactBasisPoints: bigint): SwapRefusal | null {
  if (callerMinimum !== null && callerMinimum > expectedOutput) return 'BELOW_CALLER_MINIMUM';
  if (priceImpactPpm > maxImpactBasisPoints * 100n) return 'PRICE_IMPACT_TOO_HIGH';
  return null;
}

/**
 * How much less the swap's output is worth than its input at reference prices (USD per whole
 * unit), in basis points, rounded up; negative when the pool pays more than the reference.
 */
export function shortfallBasisPoints(input: { raw: bigint; decimals: number; priceUsd: string }, output: { raw: bigint; decimals: number; priceUsd: string }): bigint {
  const pin = parseDecimal(input.priceUsd);
  const pout = parseDecimal(output.priceUsd);
  if (!pin || !pout) throw new Error('reference prices must be decimals');
  // Both values at a common scale: raw × price / 10^decimals.
  const scale = input.decimals + pin.scale + output.decimals + pout.scale;
  const valueIn = input.raw * pin.int * pow10(scale - input.decimals - pin.scale);
  const valueOut = output.raw * pout.int * pow10(scale - output.decimals - pout.scale);
  if (valueIn === 0n) return 0n;
  const lost = valueIn - valueOut;
  return lost <= 0n ? -((-lost * 10_000n) / valueIn) : (lost * 10_000n + valueIn - 1n) / valueIn;
}
