import { KeelError } from '../../platform/errors';
import { formatScaled, parseDecimal } from '../../platform/decimal';
import type { ScreeningResult } from '../aml/sanctions-screen';
import type { PriceSource } from '../prices/price-source';

/**
 * What agent payments need from other modules, as narrow ports: the composition root wires the
 * aml module's sanctions screen and the prices module's price source into them.
 */

/** Screens a recipient against the sanctions lists in use (in process, no I/O). */
export interface RecipientScreen {
  screen(address: string): ScreeningResult;
}

/** The USD value of `amount` whole units of an asset, a decimal string; null when no price can be had (never a guess). */
export interface UsdValuer {
  usdValue(blockchain: string, asset: string, amount: string): Promise<string | null>;
}

export interface AgentPorts {
  recipientScreen: RecipientScreen;
  usdValuer: UsdValuer;
}

/** A UsdValuer from a price source: the price (USD per whole unit) times the amount, exactly. */
export function usdValuerFrom(prices: PriceSource): UsdValuer {
  return {
    async usdValue(blockchain, asset, amount) {
      const { priceUsd } = await prices.price(blockchain, asset);
      const price = priceUsd === null ? null : parseDecimal(priceUsd);
      const units = parseDecimal(amount);
      if (!price || !units) return null;
      return formatScaled(price.int * units.int, price.scale + units.scale);
    },
  };
}

/**
 * Until the composition root wires a sanctions screen, agent payments are refused rather than sent
 * unscreened.
 */
export const UNWIRED_SCREEN: RecipientScreen = {
  screen() {
    throw new KeelError('SERVICE_UNAVAILABLE', 'Sanctions screening is not configured in this deployment, so agent payments cannot be screened');
  },
};

/** Until a price source is wired, no payment has a USD value (USD rules then deny, never guess). */
export const UNWIRED_VALUER: UsdValuer = {
  async usdValue() {
    return null;
  },
};
