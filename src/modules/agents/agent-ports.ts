import type { ScreeningResult } from '../aml';

/**
 * What agent payments need from other modules, as narrow ports: the composition root wires the
 * aml module's sanctions screen and the prices module's price service into them.
 */

/** Screens a recipient against the sanctions lists in use (in process, no I/O). */
export interface RecipientScreen {
  screen(address: string): ScreeningResult;
}

/**
 * The USD value of `amount` whole units of an asset at a price no single organisation can set
 * (the prices module's policy price): amountUsd null when there is no trustworthy price (never a
 * guess), with why; the price's source and time, for the evaluation's record.
 */
export interface UsdValuer {
  usdValue(blockchain: string, asset: string, amount: string): Promise<{ amountUsd: string | null; price: { priceUsd: string | null; source: string; asOf: Date | null; unavailableReason?: string } }>;
}
