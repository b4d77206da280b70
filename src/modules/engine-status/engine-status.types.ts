import { Field, Int, ObjectType } from 'type-graphql';
import type { EngineStatus } from './engine-status.service';
import type { MarketEngineView, HeldShard, ShardLeader } from '../orders';

@ObjectType('EngineShardLease', { description: 'A shard this node leads: its lease in Redis and its fencing token' })
export class EngineShardLeaseType implements HeldShard {
  @Field(() => Int, { description: 'Shard number (markets map to shards by a stable hash of the symbol, or ORDERBOOK_SHARD_MAP)' }) shard!: number;
  @Field({ description: 'Fencing token of this holding: grows with every new holder; commits carrying an older one change nothing' }) fencingToken!: string;
  @Field({ description: 'When the lease expires in Redis unless renewed' }) leaseExpiresAt!: Date;
  @Field({ description: 'Orders for the shard are refused from this moment unless the lease is renewed first (lease expiry minus a margin)' }) acceptingUntil!: Date;
  @Field({ description: 'REBUILDING while the books load from PostgreSQL (orders answer NOT_LEADER), then LEADING' }) state!: 'REBUILDING' | 'LEADING';
}

@ObjectType('EngineMarket', { description: 'A market of a shard this node leads' })
export class EngineMarketType implements MarketEngineView {
  @Field() marketId!: string;
  @Field() symbol!: string;
  @Field({ description: "The market's last committed sequence number (orders, trades and cancels each take the next)" }) sequence!: string;
  @Field(() => Int, { description: "Placements waiting for the market's next group commit" }) queueDepth!: number;
}

@ObjectType('EngineClusterShard', { description: "One shard's leader as Redis holds it" })
export class EngineClusterShardType implements ShardLeader {
  @Field(() => Int) shard!: number;
  @Field(() => String, { nullable: true, description: 'Node id of the leader; null while no node holds the lease' }) leader!: string | null;
  @Field(() => String, { nullable: true, description: "The leader's fencing token" }) fencingToken!: string | null;
  @Field(() => Int, { nullable: true, description: 'Milliseconds left on the lease' }) leaseExpiresInMs!: number | null;
}

@ObjectType('EngineStatus', { description: "This node's view of the order-book engine and of the cluster" })
export class EngineStatusType implements EngineStatus {
  @Field({ description: 'RUNNING on a node that competes for shards; STANDBY on one that competes for none (ORDERBOOK_LEAD_SHARDS=none)' }) status!: string;
  @Field({ description: 'Identifier of the answering node (KEEL_NODE_ID, or the id kept in its data folder)' }) nodeId!: string;
  @Field(() => [String], { description: 'Roles this process runs (api, orderbook, worker)' }) roles!: string[];
  @Field(() => Int) uptimeSeconds!: number;
  @Field() serverTime!: Date;
  @Field() environment!: string;
  @Field(() => Int, { description: 'Number of shards markets are spread over' }) shardCount!: number;
  @Field(() => Int, { description: 'Time-to-live of a shard lease in milliseconds (a NOT_LEADER refusal is transient for about this long)' }) leaseTtlMs!: number;
  @Field(() => [Int], { description: 'The shards this node competes for' }) eligibleShards!: number[];
  @Field(() => [EngineShardLeaseType], { description: 'The shards this node leads' }) shards!: EngineShardLeaseType[];
  @Field(() => [EngineMarketType], { description: 'Markets of the shards this node leads, with sequence and queue depth' }) markets!: EngineMarketType[];
  @Field(() => [EngineClusterShardType], { description: 'Every shard and the node leading it, read from Redis' }) cluster!: EngineClusterShardType[];
}
