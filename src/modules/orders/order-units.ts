import type { TradingRules } from '../markets/market.service';
import { formatScaled } from '../../platform/decimal';

/** A price in ticks as the market's decimal string. */
export function priceOf(rules: TradingRules, ticks: bigint): string {
  return formatScaled(ticks * rules.tick.int, rules.tick.scale);
}

/** A quantity in lots as the market's decimal string. */
export function quantityOf(rules: TradingRules, lots: bigint): string {
  return formatScaled(lots * rules.lot.int, rules.lot.scale);
}
