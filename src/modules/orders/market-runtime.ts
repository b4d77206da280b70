import type { MatchingEngine } from '../../engine';
import type { TradingRules } from '../markets/market.service';
import type { Working } from './working-order';

/**
 * One market's engine and the money state of its resting orders, both rebuilt from the open
 * orders in PostgreSQL whenever they are (re)loaded. They change only with a committed command;
 * a failed commit drops the runtime.
 */
export interface Runtime {
  rules: TradingRules;
  engine: MatchingEngine;
  resting: Map<string, Working>;
  /** The market sequence PostgreSQL holds: each commit moves it from this value, or is refused. */
  committedSequence: number;
}
