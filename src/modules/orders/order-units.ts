import type { TradingRules } from '../markets/market.service';
import { formatScaled } from '../../platform/decimal';

const PPM = 1_000_000n;

/** ceil(notional × ppm / 10^6): the engine's fee rounding (fees.ts), on bigints. */
export function feeCeil(notional: bigint, ppm: number): bigint {
  return (notional * BigInt(ppm) + PPM - 1n) / PPM;
}


/** A price in ticks as the market's decimal string. */
export function priceOf(rules: TradingRules, ticks: bigint): string {
  return formatScaled(ticks * rules.tick.int, rules.tick.scale);
}

/** A quantity in lots as the market's decimal string. */
export function quantityOf(rules: TradingRules, lots: bigint): string {
  return formatScaled(lots * rules.lot.int, rules.lot.scale);
}
