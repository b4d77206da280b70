import { readFileSync } from 'node:fs';
import type { Config } from '../../../src/platform/config';
import { ApiClient, ApiResponse } from '../../support/api-client';
import { eventually } from '../../support/eventually';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../../support/keel-process';

export const SHARD = { 'ETH-USDC': 1, 'ETH-DAI': 2 } as const;

/** A short lease so failovers take about 1.5 s: renewed every 400 ms, orders refused 300 ms before it could expire. */
export const CLUSTER_ENV = {
  RATE_LIMIT_SCALE: '1000',
  ORDERBOOK_SHARDS: '4',
  // Explicit placements (the rest of the symbols hash onto the 4 shards).
  ORDERBOOK_SHARD_MAP: 'ETH-USDC=1,ETH-DAI=2',
  ORDERBOOK_LEASE_TTL_MS: '1500',
  ORDERBOOK_LEASE_RENEW_MS: '400',
  ORDERBOOK_LEASE_MARGIN_MS: '300',
};

/** An order-book node: `keel start --roles orderbook` in a child process, under a node id of its own. */
export interface ClusterNode {
  nodeId: string;
  proc: KeelProcess;
  url: string;
}

export async function startNode(config: Config, nodeId: string, env: Record<string, string> = {}): Promise<ClusterNode> {
  const proc = await startKeelProcess(config, 'orderbook', { ...CLUSTER_ENV, KEEL_NODE_ID: nodeId, ...env });
  return { nodeId, proc, url: proc.proUrl! };
}

export async function stopNodes(nodes: ClusterNode[]): Promise<void> {
  for (const n of nodes) {
    // A stopped process must be resumed before it can die of anything but SIGKILL.
    if (isStopped(n)) n.proc.child.kill('SIGCONT');
    await stopKeelProcess(n.proc.child, 'SIGKILL');
  }
}

export function isAlive(n: ClusterNode): boolean {
  return n.proc.child.exitCode === null && n.proc.child.signalCode === null;
}

/** True once the process is stopped (SIGSTOP): state T in /proc. */
export function isStopped(n: ClusterNode): boolean {
  if (!isAlive(n)) return false;
  try {
    const stat = readFileSync(`/proc/${n.proc.child.pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
  } catch {
    return false;
  }
}

export interface EngineStatusBody {
  nodeId: string;
  status: string;
  shardCount: number;
  shards: { shard: number; fencingToken: string; leaseExpiresAt: string; acceptingUntil: string; state: string }[];
  markets: { marketId: string; symbol: string; sequence: string; queueDepth: number }[];
  cluster: { shard: number; leader: string | null; fencingToken: string | null; leaseExpiresInMs: number | null }[];
}

export async function engineStatus(client: ApiClient): Promise<EngineStatusBody> {
  const res = await client.get('/v1/orderbook/engine/status');
  if (res.status !== 200) throw new Error(`engine status: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/**
 * Waits until the cluster is at rest: every node shows the same view, twice running, with each shard
 * led by one of them and held LEADING by that leader under the view's token. What a test of a steady
 * cluster starts from: after a failover, shards may still be changing hands or rebuilding.
 */
export async function settledCluster(clients: ApiClient[], timeoutMs = 20_000): Promise<void> {
  let previous: string | undefined;
  await eventually(async () => {
    const statuses = await Promise.all(clients.map(engineStatus));
    const views = statuses.map((s) => JSON.stringify(s.cluster.map((c) => [c.shard, c.leader, c.fencingToken])));
    const led = statuses[0].cluster.every((c) => {
      const holder = statuses.find((s) => s.nodeId === c.leader);
      return holder?.shards.some((h) => h.shard === c.shard && h.fencingToken === c.fencingToken && h.state === 'LEADING');
    });
    const settled = led && views.every((v) => v === views[0]) && views[0] === previous;
    previous = views[0];
    return settled;
  }, timeoutMs, 250);
}

/** The node id leading `shard` in the cluster view, when one does. */
export async function leaderOf(client: ApiClient, shard: number): Promise<string | null> {
  return (await engineStatus(client)).cluster.find((c) => c.shard === shard)?.leader ?? null;
}

/** An answer, or undefined when the node did not answer (killed, or the connection broke). */
export async function tryRequest(fn: () => Promise<ApiResponse>): Promise<ApiResponse | undefined> {
  try {
    return await fn();
  } catch {
    return undefined;
  }
}
