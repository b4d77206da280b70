import type { Platform } from '../../platform/platform';
import type { MarketService } from '../markets';
import type { OrderQueries } from '../orders';
import { MarketDataService } from './market-data.service';

/** The market-data module's services (MarketDataServices), built from what they use. */
export function createMarketDataServices(platform: Pick<Platform, 'db'>, deps: { markets: MarketService; orderQueries: OrderQueries }) {
  return { marketData: new MarketDataService(platform.db, deps.markets, deps.orderQueries) };
}
