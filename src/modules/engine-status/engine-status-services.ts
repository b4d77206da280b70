import type { Platform } from '../../platform/platform';
import type { OrderService, ShardLeadership } from '../orders';
import { EngineStatusService } from './engine-status.service';

/** The engine-status module's services (EngineStatusServices), built from what they use. */
export function createEngineStatusServices(platform: Pick<Platform, 'config'>, deps: { shardLeadership: ShardLeadership; orders: OrderService }) {
  return { engineStatus: new EngineStatusService(platform.config.KEEL_ENV, platform.config.KEEL_ROLES, deps.shardLeadership, deps.orders) };
}
