import type { Platform } from '../../platform/platform';
import { percentBasisPoints } from '../../platform/decimal';
import { KeelPriceSource } from './keel-price-source';
import { PriceService } from './price.service';
import { ReferencePrices } from './reference-prices';

/** The prices module's services (PricesServices), built from what they use. */
export function createPricesServices(platform: Pick<Platform, 'db' | 'config'>) {
  const { db, config } = platform;
  const policyPriceRules = { windowSeconds: config.PRICE_POLICY_WINDOW_SECONDS, minOrganizations: config.PRICE_POLICY_MIN_ORGANIZATIONS, maxDeviationBasisPoints: percentBasisPoints(config.PRICE_POLICY_MAX_DEVIATION_PERCENT) };
  return { prices: new PriceService(new KeelPriceSource(db, new ReferencePrices(config.PRICE_REFERENCES, config.PRICE_STABLECOINS), config.PRICE_TRADE_MAX_AGE_SECONDS, policyPriceRules), config.PRICE_CACHE_SECONDS) };
}
