import type { Platform } from '../../platform/platform';
import type { WalletBalances } from '../ledger';
import type { MarketDataService } from '../market-data';
import type { MarketService } from '../markets';
import type { OrderService } from '../orders';
import { RealtimeHub } from './realtime-hub';
import { RealtimeService } from './realtime.service';

/** The realtime module's services (RealtimeServices), built from what they use: every commit this node makes goes to the other nodes' feeds (and its own) after it commits. */
export function createRealtimeServices(platform: Pick<Platform, 'realtimeBus' | 'logger'>, deps: { markets: MarketService; orders: OrderService; marketData: MarketDataService; walletBalances: WalletBalances }) {
  const realtimeHub = new RealtimeHub(platform.realtimeBus);
  deps.orders.onCommitted(realtimeHub.publish);
  return { realtime: new RealtimeService(realtimeHub, deps.markets, deps.orders.queries, deps.marketData, deps.walletBalances, platform.logger) };
}
