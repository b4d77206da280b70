import type { Platform } from '../../platform/platform';
import { FencedLeases } from '../../platform/fenced-leases';
import type { LedgerService } from '../ledger';
import type { MarketService } from '../markets';
import { OrderService } from './order.service';
import { ShardLeadership } from './shard-leadership';
import { ShardMap } from './shard-map';

/** The orders module's services (OrdersServices), built from what they use; `nodeId` is this process's name in the order-book cluster. */
export function createOrdersServices(platform: Platform, deps: { markets: MarketService; ledger: LedgerService; nodeId: string }) {
  const shardLeadership = createShardLeadership(platform, deps.nodeId);
  const orders = new OrderService(platform.db, deps.markets, deps.ledger, platform.unitOfWork, shardLeadership, platform.logger);
  const shardOf = (symbol: string) => shardLeadership.shards.shardOf(symbol);
  shardLeadership.onShards({ gained: (shard) => orders.rebuildShard(shardOf, shard), lost: (shard) => orders.dropShard(shardOf, shard) });
  return { orders, shardLeadership, orderQueries: orders.queries };
}

function createShardLeadership(platform: Platform, nodeId: string): ShardLeadership {
  const { config } = platform;
  const shards = new ShardMap(config.ORDERBOOK_SHARDS, config.ORDERBOOK_SHARD_MAP);
  const ttlMs = config.ORDERBOOK_LEASE_TTL_MS;
  const marginMs = config.ORDERBOOK_LEASE_MARGIN_MS ?? Math.floor(ttlMs / 5);
  const renewMs = config.ORDERBOOK_LEASE_RENEW_MS ?? Math.floor(ttlMs / 3);
  if (renewMs + marginMs >= ttlMs) throw new Error(`Invalid configuration:\n  ORDERBOOK_LEASE_RENEW_MS (${renewMs}) + ORDERBOOK_LEASE_MARGIN_MS (${marginMs}) must be below ORDERBOOK_LEASE_TTL_MS (${ttlMs})`);
  const preferred = config.ORDERBOOK_PREFERRED_SHARDS === 'all' ? undefined : new Set(shards.parseSelection(config.ORDERBOOK_PREFERRED_SHARDS));
  const options = { nodeId, eligible: shards.parseSelection(config.ORDERBOOK_LEAD_SHARDS), preferred, ttlMs, renewMs, marginMs };
  return new ShardLeadership(platform.db, new FencedLeases(platform.redis, config.REDIS_PREFIX), shards, options, platform.logger);
}
