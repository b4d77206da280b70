import { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { startKeel } from '../src/app';
import { onboardOrganization } from '../src/modules/api-keys/onboarding';
import { startOwnChain } from '../test/support/own-chain';
import { freshDatabase, LoadRun, loadRun, median, medianRun, startKeelProcess, stopProcess } from './support';

const CHAIN_ID = 31_396;
const MARKETS = ['ETH-USDC', 'ETH-USDT', 'ETH-DAI', 'USDC-USDT', 'USDC-DAI', 'USDT-DAI', 'DAI-USDC', 'USDT-USDC'];
const PORTS = [4941, 4942, 4943];

interface Node {
  nodeId: string;
  port: number;
  child: ChildProcess;
}

interface EngineStatus {
  nodeId: string;
  shards: { shard: number; state: string }[];
  cluster: { shard: number; leader: string | null }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The order-book cluster: one in-process hub (the api role: wallets, ledger, markets) and order-book
 * nodes as child processes (`keel start --roles orderbook`), on one PostgreSQL and one Redis; 8
 * markets, each on a shard of its own (ORDERBOOK_SHARD_MAP).
 * - Throughput: `connections` connections send limit orders (0.01 base, prices around 2000, about a
 *   third crossing) to the 8 markets, each to its market's leader, for `seconds` per run; orders
 *   answered 201 per second, median of `runs`. Once with one node leading all 8 shards, once with
 *   three nodes (each preferring a third of the shards, ORDERBOOK_PREFERRED_SHARDS).
 * - Failover: `kills` times, the leader of ETH-USDC is killed with SIGKILL while a client places an
 *   order on that market every 20 ms at any live node; failover time is from the kill to the first
 *   order answered 201 by the new leader. The killed node is started again before the next kill.
 *   Lease TTL `ttlMs` (default 5000, the spec's), renewed every third of it.
 */
export async function run(args: string[]): Promise<object> {
  const seconds = Number(args[0] ?? 10);
  const runs = Number(args[1] ?? 3);
  const kills = Number(args[2] ?? 10);
  const connections = Number(args[3] ?? 48);
  const ttlMs = Number(args[4] ?? 5000);

  const dataDir = mkdtempSync(join(tmpdir(), 'keel-bench-cluster-'));
  const { chain, keelChains } = await startOwnChain(CHAIN_ID, 1, dataDir);
  const env: Record<string, string> = {
    DATABASE_URL: await freshDatabase('keel_bench_cluster'),
    REDIS_PREFIX: `keelbench:cluster:${randomBytes(4).toString('hex')}:`,
    KEEL_MASTER_KEY: randomBytes(32).toString('hex'),
    KEEL_CHAINS: keelChains,
    HOST: '127.0.0.1',
    RATE_LIMIT_SCALE: '100000',
    ORDERBOOK_SHARDS: String(MARKETS.length),
    ORDERBOOK_SHARD_MAP: MARKETS.map((m, i) => `${m}=${i}`).join(','),
    ORDERBOOK_LEASE_TTL_MS: String(ttlMs),
  };
  const hub = await startKeel(loadConfig({ ...env, KEEL_ROLES: 'api', CORE_PORT: '0', PRO_PORT: '0', LOG_LEVEL: 'silent' }), createLogger('silent'));
  const nodes: Node[] = [];
  try {
    const { services } = hub;
    const db = hub.platform.db;
    const org = await onboardOrganization(db, services, { name: 'bench', tier: 'Business', proAccess: true });
    const [network] = services.networks.all();
    const assets = (await services.chains.listAssets({ limit: 100, offset: 0, blockchainId: network.blockchainId })).items;
    const asset = (symbol: string) => assets.find((a) => a.symbol === symbol)!;
    const wallets: string[] = [];
    for (const name of ['buyer', 'seller']) {
      const wallet = await services.masterWallets.create(org.orgId, { blockchainId: network.blockchainId, name });
      wallets.push(wallet.id);
      for (const a of assets) {
        const amount = 10n ** BigInt(a.decimals) * (a.symbol === 'ETH' ? 10_000_000n : 1_000_000_000n);
        await db.transaction((trx) => services.ledger.credit(trx, { organizationId: org.orgId, walletId: wallet.id, assetId: a.id, amount, reference: `bench:${name}:${a.symbol}` }));
      }
    }
    for (const symbol of MARKETS) {
      const [base, quote] = symbol.split('-');
      await services.markets.create({ symbol, baseAssetId: asset(base).id, quoteAssetId: asset(quote).id, tickSize: '0.01', lotSize: '0.001', minNotional: '0', makerFee: '0.001', takerFee: '0.002' } as never);
    }
    const headers = { apiKey: org.proKey!, orgId: org.orgId };
    let n = 0;
    const orderBody = (market: string) => {
      const buy = n++ % 2 === 0;
      const cents = Math.floor(Math.random() * 1500);
      return JSON.stringify({ walletId: buy ? wallets[0] : wallets[1], market, side: buy ? 'BUY' : 'SELL', type: 'LIMIT', price: String(((buy ? 199_000 : 199_500) + cents) / 100), quantity: '0.01', timeInForce: 'GTC' });
    };

    const startNode = async (i: number, nodeEnv: Record<string, string> = {}) => {
      const port = PORTS[i];
      const child = await startKeelProcess({ ...env, KEEL_ROLES: 'orderbook', PRO_PORT: String(port), CORE_PORT: '0', KEEL_NODE_ID: `node-${i}`, ...nodeEnv }, `http://127.0.0.1:${port}/ready`);
      const node = { nodeId: `node-${i}`, port, child };
      nodes[i] = node;
      return node;
    };
    const status = async (node: Node): Promise<EngineStatus> => {
      const res = await fetch(`http://127.0.0.1:${node.port}/v1/orderbook/engine/status`, { headers });
      return ((await res.json()) as { data: EngineStatus }).data;
    };
    /** Waits until every shard is led (books rebuilt) by one of `live`; the leader of each market. */
    const layout = async (live: Node[]): Promise<Map<string, Node>> => {
      for (;;) {
        const statuses = await Promise.all(live.map(status));
        const leading = new Map<number, Node>();
        statuses.forEach((s, i) => s.shards.filter((h) => h.state === 'LEADING').forEach((h) => leading.set(h.shard, live[i])));
        if (leading.size === MARKETS.length) return new Map(MARKETS.map((m, i) => [m, leading.get(i)!]));
        await sleep(100);
      }
    };
    /** One load run: every node gets the connections of its markets' share, each request to a market it leads. */
    const load = async (leaders: Map<string, Node>, duration: number): Promise<LoadRun> => {
      const byNode = new Map<Node, string[]>();
      for (const [market, node] of leaders) byNode.set(node, [...(byNode.get(node) ?? []), market]);
      const parts = await Promise.all(
        [...byNode].map(([node, markets]) =>
          loadRun({
            url: `http://127.0.0.1:${node.port}/v1/orderbook/orders`,
            connections: Math.max(1, Math.round((connections * markets.length) / MARKETS.length)),
            duration,
            requests: [{ method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, setupRequest: (req: object) => ({ ...req, body: orderBody(markets[n % markets.length]) }) }],
          }),
        ),
      );
      return { perSecond: parts.reduce((s, p) => s + p.perSecond, 0), p50: median(parts.map((p) => p.p50)), p99: Math.max(...parts.map((p) => p.p99)), non2xx: parts.reduce((s, p) => s + p.non2xx, 0), errors: parts.reduce((s, p) => s + p.errors, 0) };
    };
    const measure = async (leaders: Map<string, Node>) => {
      await load(leaders, 3); // warm-up
      const results: LoadRun[] = [];
      for (let i = 0; i < runs; i++) results.push(await load(leaders, seconds));
      return { runs: results, median: medianRun(results, 'ordersPerSecond') };
    };

    // One node leading all 8 shards.
    const single = await startNode(0);
    const oneNode = await measure(await layout([single]));
    await stopProcess(single.child);

    // Three nodes, each preferring a third of the shards.
    const thirds = ['0,1,2', '3,4,5', '6,7'];
    await Promise.all(PORTS.map((_, i) => startNode(i, { ORDERBOOK_PREFERRED_SHARDS: thirds[i] })));
    const threeLayout = await layout(nodes);
    const threeNodes = await measure(threeLayout);
    const spread = Object.fromEntries(nodes.map((node) => [node.nodeId, MARKETS.filter((m) => threeLayout.get(m) === node)]));

    // Failover: kill the leader of ETH-USDC, place on any live node until the new leader answers 201.
    const failovers: number[] = [];
    for (let k = 0; k < kills; k++) {
      const leader = (await layout(nodes)).get('ETH-USDC')!;
      const killedAt = performance.now();
      leader.child.kill('SIGKILL');
      const live = nodes.filter((node) => node !== leader);
      for (let attempt = 0; ; attempt++) {
        const node = live[attempt % live.length];
        const res = await fetch(`http://127.0.0.1:${node.port}/v1/orderbook/orders`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: orderBody('ETH-USDC') }).catch(() => undefined);
        if (res?.status === 201) break;
        await res?.text();
        await sleep(20);
      }
      failovers.push(performance.now() - killedAt);
      await startNode(nodes.indexOf(leader), { ORDERBOOK_PREFERRED_SHARDS: thirds[nodes.indexOf(leader)] });
    }
    const sorted = [...failovers].sort((a, b) => a - b);
    return {
      benchmark: 'cluster',
      markets: MARKETS.length,
      connections,
      secondsPerRun: seconds,
      leaseTtlMs: ttlMs,
      throughput: {
        oneNode: oneNode.median,
        threeNodes: threeNodes.median,
        threeNodesShards: spread,
        runs: { oneNode: oneNode.runs, threeNodes: threeNodes.runs },
      },
      failover: { kills, p50Ms: Math.round(median(sorted)), maxMs: Math.round(sorted[sorted.length - 1]), allMs: sorted.map((ms) => Math.round(ms)) },
    };
  } finally {
    for (const node of nodes) if (node) await stopProcess(node.child);
    await hub.stop();
    await chain.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
