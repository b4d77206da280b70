import type { ScreeningResult } from '../aml/sanctions-screen';

/**
 * What agent payments need from other modules, as narrow ports: the composition root wires the
 * aml module's sanctions screen and the prices module's price service into them.
 */

/** Screens a recipient against the sanctions lists in use (in process, no I/O). */
export interface RecipientScreen {
  screen(address: string): ScreeningResult;
}

/** The USD value of `amount` whole units of an asset, a decimal string; null when no price can be had (never a guess). */
export interface UsdValuer {
  usdValue(blockchain: string, asset: string, amount: string): Promise<string | null>;
}
