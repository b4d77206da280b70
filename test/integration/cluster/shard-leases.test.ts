import { FencedLeases } from '../../../src/platform/fenced-leases';
import { createLogger } from '../../../src/platform/logger';
import { KeelError } from '../../../src/platform/errors';
import { LeadershipOptions, ShardLeadership } from '../../../src/modules/orders/shard-leadership';
import { ShardMap } from '../../../src/modules/orders/shard-map';
import { eventually } from '../../support/eventually';
import { useTestKeel } from '../../support/use-test-keel';
import { TcpProxy } from '../../support/tcp-proxy';
import { createDb } from '../../../src/platform/db/knex';
import type { Knex } from 'knex';

/**
 * Shard leadership against the real Redis and PostgreSQL, in process: two markets' worth of shards
 * (2), a 1 s lease renewed every 250 ms, orders refused 200 ms before it could expire.
 */
let leases: FencedLeases;
const running: ShardLeadership[] = [];
const shards = new ShardMap(2, { 'ETH-USDC': 0, 'ETH-DAI': 1 });

function leadership(nodeId: string, overrides: Partial<LeadershipOptions> = {}, store: FencedLeases = leases, db: Knex = t.keel.platform.db): ShardLeadership {
  const l = new ShardLeadership(db, store, shards, { nodeId, eligible: [0, 1], ttlMs: 1000, renewMs: 250, marginMs: 200, ...overrides }, createLogger('silent'));
  l.onShards({ gained: async () => undefined, lost: async () => undefined });
  running.push(l);
  return l;
}

const pgToken = async (shard: number) => String((await t.keel.platform.db('orderbook_shards').where({ shard }).first()).fencingToken);
const refusal = (l: ShardLeadership, symbol: string): KeelError | undefined => {
  try {
    l.assertAccepting(symbol);
    return undefined;
  } catch (e) {
    return e as KeelError;
  }
};

const { t } = useTestKeel({ KEEL_ROLES: 'api' });
beforeAll(async () => {
  leases = new FencedLeases(t.keel.platform.redis, t.config.REDIS_PREFIX);
});
afterEach(async () => {
  for (const l of running.splice(0)) await l.stop();
});

it('one node leads each shard; the token is in Redis and in PostgreSQL; another node is refused with NOT_LEADER naming the leader; a released shard is taken under a greater token', async () => {
  const a = leadership('node-a');
  await a.start();
  const b = leadership('node-b');
  await b.start();
  expect(a.heldShards().map((h) => h.shard)).toEqual([0, 1]);
  expect(b.heldShards()).toEqual([]);
  const view = await b.clusterView();
  for (const h of a.heldShards()) {
    expect(view[h.shard]).toMatchObject({ leader: 'node-a', fencingToken: h.fencingToken });
    expect(await pgToken(h.shard)).toBe(h.fencingToken);
  }
  expect(refusal(a, 'ETH-USDC')).toBeUndefined();
  expect(refusal(b, 'ETH-USDC')).toMatchObject({ code: 'NOT_LEADER', status: 409, retryAfterSeconds: 1, details: { leader: 'node-a', shard: 0 } });
  // A node that competes for no shard still names the leader.
  const c = leadership('node-c', { eligible: [] });
  await c.start();
  expect(c.heldShards()).toEqual([]);
  expect(refusal(c, 'ETH-DAI')).toMatchObject({ code: 'NOT_LEADER', details: { leader: 'node-a', shard: 1 } });

  const before = a.heldShards()[0].fencingToken;
  await a.stop();
  await eventually(() => b.heldShards().length === 2 && b.heldShards().every((h) => h.state === 'LEADING'), 5_000);
  expect(BigInt(b.heldShards()[0].fencingToken)).toBeGreaterThan(BigInt(before));
  expect(await pgToken(0)).toBe(b.heldShards()[0].fencingToken);
  expect(refusal(b, 'ETH-USDC')).toBeUndefined();
});

it('after Redis lost its counters, a node never leads under a token PostgreSQL has already seen: it gives the lease back, raises the counter and takes it under a greater one', async () => {
  const a = leadership('node-a');
  await a.start();
  const seen = await pgToken(0);
  await a.stop();
  const redis = t.keel.platform.redis;
  await redis.del([`${t.config.REDIS_PREFIX}lease:orderbook:shard:0:token`, `${t.config.REDIS_PREFIX}lease:orderbook:shard:1:token`]);

  const b = leadership('node-b');
  await b.start(); // takes token 1 from the emptied counter: behind PostgreSQL, given back
  await eventually(() => b.heldShards().some((h) => h.shard === 0), 5_000);
  const token = b.heldShards().find((h) => h.shard === 0)!.fencingToken;
  expect(BigInt(token)).toBeGreaterThan(BigInt(seen));
  expect(await pgToken(0)).toBe(token);
});

it('a leader whose renewals fail stops taking orders before its lease can expire, and drops the shard', async () => {
  let failing = false;
  // Redis unreachable for this node only: its takes, renewals and releases fail (a take that still
  // worked would hand it its own lease back at once).
  const unreachable = () => Promise.reject(new Error('Redis unreachable'));
  const flaky = Object.create(leases, {
    take: { value: (...args: Parameters<FencedLeases['take']>) => (failing ? unreachable() : leases.take(...args)) },
    renew: { value: (...args: Parameters<FencedLeases['renew']>) => (failing ? unreachable() : leases.renew(...args)) },
    release: { value: (...args: Parameters<FencedLeases['release']>) => (failing ? unreachable() : leases.release(...args)) },
  }) as FencedLeases;
  const a = leadership('node-a', {}, flaky);
  await a.start();
  expect(refusal(a, 'ETH-DAI')).toBeUndefined();

  failing = true;
  // Poll until it refuses; at that moment its lease must still be alive in Redis.
  const refused = await eventually(() => refusal(a, 'ETH-DAI'), 5_000, 5);
  expect(refused.code).toBe('NOT_LEADER');
  const [, holder] = await leases.holders(['orderbook:shard:0', 'orderbook:shard:1']);
  expect(holder).toMatchObject({ nodeId: 'node-a' });
  expect(holder!.ttlMs).toBeGreaterThan(0);
  await eventually(() => a.heldShards().length === 0, 5_000);
});

it('a leader that cannot reach PostgreSQL stops taking orders before its lease can expire, stops renewing it, and another node takes the shard', async () => {
  // This node reaches PostgreSQL only through a proxy the test cuts.
  const url = new URL(t.config.DATABASE_URL);
  const proxy = new TcpProxy(Number(url.port || 5432));
  await proxy.open();
  url.port = String(proxy.port);
  // Its connections breaking is the point: the client's warnings about them go to a silent log.
  const cutOff = createDb(url.toString(), 2, { acquireTimeoutMs: 300, logger: createLogger('silent') });
  const a = leadership('node-a', {}, leases, cutOff);
  try {
    await a.start();
    const b = leadership('node-b');
    await b.start();
    expect(a.heldShards().map((h) => h.shard)).toEqual([0, 1]);

    await proxy.close();
    const refused = await eventually(() => refusal(a, 'ETH-USDC'), 5_000, 5);
    expect(refused.code).toBe('NOT_LEADER');
    // Refused while its lease still stood: nobody else could have taken orders yet.
    const [holder] = await leases.holders(['orderbook:shard:0']);
    expect(holder === null || holder.nodeId === 'node-a').toBe(true);
    await eventually(() => b.heldShards().length === 2 && b.heldShards().every((h) => h.state === 'LEADING'), 10_000);
    // Node A forgets the shards once its lease's time is up; on a busy machine its timer may fire just after B took them.
    await eventually(() => a.heldShards().length === 0, 5_000);
    expect(refusal(b, 'ETH-USDC')).toBeUndefined();
  } finally {
    await a.stop();
    await proxy.close();
    await cutOff.destroy();
  }
});
