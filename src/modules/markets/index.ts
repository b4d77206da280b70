/**
 * The markets module's face: what other modules may use of it. Markets: their symbols, assets, status and trading rules.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { MarketService } from './market.service';

export { marketRows, marketIdsWithBaseIn } from './market-queries';
export { MarketService } from './market.service';
export type { MarketView, TradingRules } from './market.service';

export { createMarketsServices } from './markets-services';

/** The markets module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface MarketsServices {
  /** Order book: markets, the internal ledger, orders (one engine per market), market data. */
  markets: MarketService;
}
