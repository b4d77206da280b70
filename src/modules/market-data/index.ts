/**
 * The market-data module's face: what other modules may use of it. Market data: tickers, candles, the book and trades as read views.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { MarketDataService } from './market-data.service';

export { CANDLE_INTERVALS, MarketDataService } from './market-data.service';
export type { Candle, Ticker } from './market-data.service';

export { createMarketDataServices } from './market-data-services';

/** The market-data module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface MarketDataServices {
  marketData: MarketDataService;
}
