import type { Environment } from '../../platform/auth/permissions';
import type { MarketEngineView, OrderService, HeldShard, ShardLeader, ShardLeadership } from '../orders';

export interface EngineStatus {
  /** RUNNING while this node leads at least one shard or stands by for one; STANDBY when it competes for none. */
  status: string;
  nodeId: string;
  roles: string[];
  uptimeSeconds: number;
  serverTime: Date;
  environment: string;
  shardCount: number;
  leaseTtlMs: number;
  /** The shards this node competes for. */
  eligibleShards: number[];
  /** The shards this node holds, with their lease expiry and fencing token. */
  shards: HeldShard[];
  /** The markets of the shards this node holds: committed sequence and placements waiting. */
  markets: MarketEngineView[];
  /** Every shard's leader as Redis holds it now. */
  cluster: ShardLeader[];
}

/** The order-book engine as this node runs it, and the cluster as Redis sees it. */
export class EngineStatusService {
  private readonly startedAt = Date.now();

  constructor(
    private readonly environment: Environment,
    private readonly roles: string,
    private readonly leadership: ShardLeadership,
    private readonly orders: OrderService,
  ) {}

  get nodeId(): string {
    return this.leadership.nodeId;
  }

  async status(): Promise<EngineStatus> {
    const shards = this.leadership.heldShards();
    const shardOf = (symbol: string) => this.leadership.shards.shardOf(symbol);
    const [markets, cluster] = await Promise.all([
      this.orders.engineView(
        shardOf,
        shards.map((s) => s.shard),
      ),
      this.leadership.clusterView(),
    ]);
    const { eligible, ttlMs } = this.leadership.options;
    return {
      status: eligible.length ? 'RUNNING' : 'STANDBY',
      nodeId: this.nodeId,
      roles: this.roles.split(',').map((r) => r.trim()).filter(Boolean),
      uptimeSeconds: Math.floor((Date.now() - this.startedAt) / 1000),
      serverTime: new Date(),
      environment: this.environment,
      shardCount: this.leadership.shards.count,
      leaseTtlMs: ttlMs,
      eligibleShards: eligible,
      shards,
      markets,
      cluster,
    };
  }
}
