import type { Platform } from '../../platform/platform';
import { RedisChannel } from '../../platform/redis-channel';
import type { ChainService } from '../chains';
import { MarketService } from './market.service';

/** The markets module's services (MarketsServices), built from what they use. */
export function createMarketsServices(platform: Pick<Platform, 'db' | 'config' | 'redis' | 'unitOfWork'>, deps: { chains: ChainService }) {
  return { markets: new MarketService(platform.db, deps.chains, platform.unitOfWork, new RedisChannel(platform.redis, `${platform.config.REDIS_PREFIX}markets:changed`)) };
}
