/**
 * The prices module's face: what other modules may use of it. USD prices of tokens: references, stablecoins at par, Keel's own order-book trades; cached.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { PriceService } from './price.service';

export { createPricesServices } from './prices-services';

/** The prices module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface PricesServices {
  /** USD prices of tokens: references, stablecoins at par, Keel's own order-book trades; cached. */
  prices: PriceService;
}
