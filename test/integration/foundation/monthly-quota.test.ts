import { useTestKeel } from '../../support/use-test-keel';
import type { ApiResponse } from '../../support/api-client';
import type { TestOrg } from '../../support/keel';
import { keelCommand } from '../../support/keel-cli';
import { RealtimeClient } from '../../support/realtime-client';
import { eventually } from '../../support/eventually';
import { TIER_MONTHLY_QUOTAS } from '../../../src/platform/quota/tier-quotas';
import { startKeel } from '../../../src/app';
import { ApiClient } from '../../support/api-client';

/** The quota's clock: each test sets the time it needs; the rest of Keel keeps the real one. */
const clock = { at: new Date(), now: () => new Date(clock.at) };
const LIMIT = 6;
// A test-sized quota for the tier test organisations get; flushes only when a test (or the usage read) asks.
const { t } = useTestKeel({ MONTHLY_QUOTAS: { ...TIER_MONTHLY_QUOTAS, Business: LIMIT }, QUOTA_FLUSH_INTERVAL_MS: 3_600_000 }, { clock });

const epoch = (iso: string) => String(Date.parse(iso) / 1000);
const read = (org: TestOrg) => org.core.get('/v1/organization');
const quotaHeaders = (r: ApiResponse) => ({ limit: r.headers.get('x-quota-limit'), remaining: r.headers.get('x-quota-remaining'), reset: r.headers.get('x-quota-reset') });

async function spend(org: TestOrg, n: number): Promise<void> {
  for (let i = 0; i < n; i++) expect((await read(org)).status).toBe(200);
}

/** This Keel's every Redis key, as Redis losing its data (a restart without persistence, FLUSHDB) would leave it. */
async function loseRedisData(): Promise<void> {
  const redis = t.keel.platform.redis;
  for await (const keys of redis.scanIterator({ MATCH: `${t.config.REDIS_PREFIX}*`, COUNT: 500 })) if (keys.length) await redis.del(keys);
}

test('requests of every key on both hosts spend one monthly quota; once spent: 429 QUOTA_EXCEEDED on core REST, pro REST and GraphQL, with details and headers', async () => {
  clock.at = new Date('2026-11-30T12:00:00Z');
  const org = await t.createOrg();
  const first = await read(org);
  expect(quotaHeaders(first)).toEqual({ limit: String(LIMIT), remaining: '5', reset: epoch('2026-12-01T00:00:00Z') });
  expect(first.headers.get('x-ratelimit-limit')).not.toBeNull();
  expect(quotaHeaders(await org.pro.get('/v1/orderbook/engine/status')).remaining).toBe('4');
  expect(quotaHeaders(await org.core.graphql('{ organization { id } }')).remaining).toBe('3');
  await spend(org, 3);

  const core = await read(org);
  expect(core.status).toBe(429);
  expect(core.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { limit: LIMIT, used: LIMIT, resetAt: '2026-12-01T00:00:00.000Z' } });
  expect(core.body.error.requestId).toBe(core.headers.get('x-request-id'));
  expect(quotaHeaders(core)).toEqual({ limit: String(LIMIT), remaining: '0', reset: epoch('2026-12-01T00:00:00Z') });
  // Until the month resets, by the quota's clock: 12 hours.
  expect(core.headers.get('retry-after')).toBe(String(12 * 3600));

  const pro = await org.pro.get('/v1/orderbook/engine/status');
  expect(pro.status).toBe(429);
  expect(pro.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { limit: LIMIT, used: LIMIT } });
  expect(quotaHeaders(pro).remaining).toBe('0');
  expect(pro.headers.get('retry-after')).toBe(String(12 * 3600));

  const graphql = await org.core.graphql('{ organization { id } }');
  expect(graphql.status).toBe(429);
  expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { limit: LIMIT, used: LIMIT, resetAt: '2026-12-01T00:00:00.000Z' } });
  expect(graphql.headers.get('retry-after')).toBe(String(12 * 3600));

  // A subscribe is a request too; refused, and the connection stays open.
  const socket = new RealtimeClient(t.coreUrl, { apiKey: org.adminKey, orgId: org.orgId });
  await socket.ready();
  const feed = socket.subscribe('subscription { events { id } }');
  await eventually(() => feed.errors !== undefined);
  expect(feed.errors![0].extensions).toMatchObject({ code: 'QUOTA_EXCEEDED' });
  expect(socket.closed).toBeUndefined();
  await socket.close();

  // Refused requests are not counted.
  expect((await t.keel.services.quotas.usage(org.orgId)).used).toBe(LIMIT);
  // Another organisation's quota is its own.
  expect((await read(await t.createOrg())).status).toBe(200);
});

test('two nodes spend one count, and each node\'s record adds up in PostgreSQL', async () => {
  clock.at = new Date('2026-11-30T12:00:00Z');
  const org = await t.createOrg();
  const other = await startKeel({ ...t.config, KEEL_ROLES: 'api' }, undefined, { clock });
  try {
    const otherCore = new ApiClient(other.core!.url, { apiKey: org.adminKey, orgId: org.orgId });
    await spend(org, 3);
    for (let i = 0; i < 3; i++) expect((await otherCore.get('/v1/organization')).status).toBe(200);
    expect((await read(org)).body.error.code).toBe('QUOTA_EXCEEDED');
    expect((await otherCore.get('/v1/organization')).body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { used: LIMIT } });
    await Promise.all([t.keel.platform.quota.flush(), other.platform.quota.flush()]);
    const day = await t.keel.platform.db('api_usage_daily').where({ organizationId: org.orgId }).sum({ requests: 'requests' }).first();
    expect(Number(day!.requests)).toBe(LIMIT);
  } finally {
    await other.stop();
  }
});

test('a request the rate limit refuses (429 RATE_LIMIT_EXCEEDED) does not spend the quota', async () => {
  clock.at = new Date('2026-11-30T12:00:00Z');
  const org = await t.createOrg({ tier: 'Starter' });
  // Six at the start of a fresh second: Starter allows five a second.
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  const responses = await Promise.all(Array.from({ length: 6 }, () => read(org)));
  const limited = responses.filter((r) => r.status === 429);
  expect(limited.map((r) => r.body.error.code)).toEqual(['RATE_LIMIT_EXCEEDED']);
  await eventually(async () => (await t.keel.services.quotas.usage(org.orgId)).used === 5);
  const usage = await t.keel.services.quotas.usage(org.orgId);
  expect(usage).toMatchObject({ limit: TIER_MONTHLY_QUOTAS.Starter, used: 5, byDay: [{ day: '2026-11-30', requests: 5 }] });
});

/** What the day window of the rate limit of `org`'s core key has counted, read when called. */
async function rateLimitCounter(org: TestOrg): Promise<() => Promise<number>> {
  const key = await t.keel.platform.db('api_keys').where({ organization_id: org.orgId, host: 'core' }).first();
  return async () => Number(await t.keel.platform.redis.get(`${t.config.REDIS_PREFIX}rl:Business:d:${key.id}`));
}

test('a mutation document the quota cannot hold whole is refused (429 QUOTA_EXCEEDED) before any of it runs, and spends only its arrival, of the quota and of the rate limit', async () => {
  clock.at = new Date('2026-11-30T12:00:00Z');
  const org = await t.createOrg();
  const rateLimitCounted = await rateLimitCounter(org);
  await spend(org, 3);
  expect(await rateLimitCounted()).toBe(3);
  // Its arrival leaves the month 2: its four mutations do not fit.
  const createKeys = `mutation { ${[0, 1, 2, 3].map((i) => `k${i}: createApiKey(input: {name: "k${i}", scopes: ["read"]}) { id }`).join(' ')} }`;
  const refused = await org.core.graphql(createKeys);
  expect(refused.status).toBe(429);
  expect(refused.body.errors[0].extensions.code).toBe('QUOTA_EXCEEDED');
  expect(await rateLimitCounted()).toBe(4);

  const next = await read(org);
  expect(next.status).toBe(200);
  expect(quotaHeaders(next).remaining).toBe('1');
  expect(await rateLimitCounted()).toBe(5);
  expect((await org.core.get('/v1/api-keys')).body.data.map((k: { name: string }) => k.name)).not.toContain('k0');
});

test('a document of two mutations the quota refuses spends only its arrival of the rate limit too', async () => {
  clock.at = new Date('2026-11-30T12:00:00Z');
  const org = await t.createOrg();
  const rateLimitCounted = await rateLimitCounter(org);
  await spend(org, 5);
  // Its arrival takes the month's last request: its second mutation does not fit.
  const refused = await org.core.graphql(`mutation { a: createApiKey(input: {name: "a", scopes: ["read"]}) { id } b: createApiKey(input: {name: "b", scopes: ["read"]}) { id } }`);
  expect(refused.status).toBe(429);
  expect(refused.body.errors[0].extensions.code).toBe('QUOTA_EXCEEDED');
  expect(await rateLimitCounted()).toBe(6);
});

test('GET /v1/organization/usage and organizationUsage: the month by day and by key (read scope)', async () => {
  clock.at = new Date('2026-11-29T10:00:00Z');
  const org = await t.createOrg();
  await spend(org, 2);
  expect((await org.pro.get('/v1/orderbook/engine/status')).status).toBe(200);
  clock.at = new Date('2026-11-30T09:00:00Z');

  const usage = await org.core.get('/v1/organization/usage');
  expect(usage.status).toBe(200);
  const keys = await t.keel.platform.db('api_keys').where({ organizationId: org.orgId }).select('id', 'host');
  const keyOf = (host: string) => keys.find((k) => k.host === host)!.id;
  // The usage request itself is the fourth of the month.
  expect(usage.body.data).toEqual({
    month: '2026-11',
    limit: LIMIT,
    used: 4,
    remaining: 2,
    resetAt: '2026-12-01T00:00:00.000Z',
    limitSetByOperator: false,
    byDay: [
      { day: '2026-11-29', requests: 3 },
      { day: '2026-11-30', requests: 1 },
    ],
    byKey: [
      { apiKeyId: keyOf('core'), name: 'admin', host: 'CORE', requests: 3 },
      { apiKeyId: keyOf('pro'), name: 'trading', host: 'PRO', requests: 1 },
    ],
  });

  const graphql = await org.core.graphql('{ organizationUsage { month used remaining byDay { day requests } byKey { name requests } } }');
  expect(graphql.body.data.organizationUsage).toEqual({
    month: '2026-11',
    used: 5,
    remaining: 1,
    byDay: [
      { day: '2026-11-29', requests: 3 },
      { day: '2026-11-30', requests: 2 },
    ],
    byKey: [
      { name: 'admin', requests: 4 },
      { name: 'trading', requests: 1 },
    ],
  });

  const writer = await t.keel.services.apiKeys.issue({ organizationId: org.orgId, name: 'writer', host: 'core', scopes: ['write'], tier: 'Business' });
  const refused = await org.core.with({ apiKey: writer.secret, orgId: org.orgId }).get('/v1/organization/usage');
  expect(refused.status).toBe(403);
  expect(refused.body.error.code).toBe('FORBIDDEN');
});

test('once the quota is spent, reading the usage is still answered (REST and a GraphQL query of only organizationUsage); anything else is refused', async () => {
  clock.at = new Date('2026-11-30T12:00:00Z');
  const org = await t.createOrg();
  await spend(org, LIMIT);
  expect((await read(org)).body.error.code).toBe('QUOTA_EXCEEDED');

  const usage = await org.core.get('/v1/organization/usage');
  expect(usage.status).toBe(200);
  expect(usage.body.data).toMatchObject({ limit: LIMIT, used: LIMIT, remaining: 0, resetAt: '2026-12-01T00:00:00.000Z' });
  expect(quotaHeaders(usage)).toEqual({ limit: String(LIMIT), remaining: '0', reset: epoch('2026-12-01T00:00:00Z') });

  const named = await org.core.graphql('query Usage { organizationUsage { used remaining } __typename }');
  expect(named.status).toBe(200);
  expect(named.body.data.organizationUsage).toEqual({ used: LIMIT, remaining: 0 });

  // Another root field beside it, a mutation, or a document with a fragment: refused before it runs.
  for (const query of [
    '{ organizationUsage { used } organization { id } }',
    'mutation { createWebhook(input: { url: "https://example.com/hook", name: "hook", eventTypes: ["*"] }) { id } }',
    '{ ...U } fragment U on Query { organizationUsage { used } }',
  ]) {
    const refused = await org.core.graphql(query);
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions.code).toBe('QUOTA_EXCEEDED');
  }
  expect(await t.keel.platform.db('webhook_subscriptions').where({ organizationId: org.orgId }).count({ n: '*' }).first()).toEqual({ n: '0' });
  // The usage reads spent nothing: the month's count is still the limit.
  expect((await t.keel.services.quotas.usage(org.orgId)).used).toBe(LIMIT);
});

test('the count survives Redis losing its data: seeded again from PostgreSQL, and a count that missed unflushed requests is raised at the next flush', async () => {
  clock.at = new Date('2026-11-30T12:00:00Z');
  const org = await t.createOrg();
  await spend(org, 3);
  await t.keel.platform.quota.flush();
  await loseRedisData();
  expect(quotaHeaders(await read(org)).remaining).toBe('2');

  // Lost before this node flushed its fourth request: the count errs low by that one…
  await loseRedisData();
  expect(quotaHeaders(await read(org)).remaining).toBe('2');
  // …until the next flush raises it to the record (5 requests).
  await t.keel.platform.quota.flush();
  expect(quotaHeaders(await read(org)).remaining).toBe('0');
  const refused = await read(org);
  expect(refused.status).toBe(429);
  expect(refused.body.error.details).toMatchObject({ limit: LIMIT, used: LIMIT });

  await t.keel.platform.quota.flush();
  await loseRedisData();
  expect((await read(org)).status).toBe(429);
  const month = await t.keel.platform.db('api_usage_monthly').where({ organizationId: org.orgId }).first('requests');
  expect(Number(month.requests)).toBe(LIMIT);
});

test('the quota resets at the UTC month boundary, and the past month stays on record', async () => {
  clock.at = new Date('2026-11-30T23:59:59Z');
  const org = await t.createOrg();
  await spend(org, LIMIT);
  expect((await read(org)).status).toBe(429);

  clock.at = new Date('2026-12-01T00:00:00Z');
  const december = await read(org);
  expect(december.status).toBe(200);
  expect(quotaHeaders(december)).toEqual({ limit: String(LIMIT), remaining: '5', reset: epoch('2027-01-01T00:00:00Z') });

  const usage = await org.core.get('/v1/organization/usage');
  expect(usage.body.data).toMatchObject({ month: '2026-12', used: 2, byDay: [{ day: '2026-12-01', requests: 2 }] });
  const months = await t.keel.platform.db('api_usage_monthly').where({ organizationId: org.orgId }).orderBy('month').select(t.keel.platform.db.raw(`to_char(month, 'YYYY-MM') AS month`), 'requests');
  expect(months.map((m) => [m.month, Number(m.requests)])).toEqual([
    ['2026-11', LIMIT],
    ['2026-12', 2],
  ]);
});

test('`keel quota set` raises an organisation\'s quota on every node at once, shown in its usage; `tier` gives it back its tier\'s', async () => {
  // The command line reads the real time, so the quota does here too, and is configured as Keel is.
  clock.at = new Date();
  const keel = (args: string[], command = 'set') => keelCommand(t.config, ['quota', command, ...args], { MONTHLY_QUOTAS: `Business=${LIMIT}` });
  const org = await t.createOrg();
  await spend(org, LIMIT);
  expect((await read(org)).status).toBe(429);

  const raised = await keel([org.orgId, '10']);
  expect(raised).toMatchObject({ limit: 10, used: LIMIT, remaining: 4, limitSetByOperator: true });
  const after = await read(org);
  expect(after.status).toBe(200);
  expect(quotaHeaders(after)).toMatchObject({ limit: '10', remaining: '3' });
  expect((await org.core.get('/v1/organization/usage')).body.data).toMatchObject({ limit: 10, used: LIMIT + 2, limitSetByOperator: true });

  expect(await keel([org.orgId, 'tier'])).toMatchObject({ limit: LIMIT, limitSetByOperator: false });
  expect((await read(org)).status).toBe(429);
  await expect(keel([org.orgId, '0'])).rejects.toThrow(/requests: must be a whole number/);
  expect(await keel([org.orgId], 'show')).toMatchObject({ limit: LIMIT, used: LIMIT + 2, limitSetByOperator: false });
  await expect(keel(['not-an-id'], 'show')).rejects.toThrow(/Organisation not found/);
  // Five command-line runs, each compiling the sources at start-up.
}, 180_000);

test('both OpenAPI documents declare the quota headers on every answer and QUOTA_EXCEEDED among the 429s; the core one the usage route', async () => {
  for (const url of [t.coreUrl, t.proUrl]) {
    const doc = (await (await fetch(`${url}/v1/openapi.json`)).json()) as any;
    expect(Object.keys(doc.components.headers)).toEqual(expect.arrayContaining(['X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset', 'X-RateLimit-Remaining']));
    expect(doc.components.responses.E429.description).toContain('QUOTA_EXCEEDED');
    expect(doc.components.responses.E429.headers['X-Quota-Reset']).toEqual({ $ref: '#/components/headers/X-Quota-Reset' });
    expect(doc.components.responses.E429.headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    expect(doc.components.headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 1 });
    const operations = Object.values(doc.paths).flatMap((path) => Object.values(path as Record<string, { responses: Record<string, { headers?: object }> }>));
    const successes = operations.flatMap((op) => Object.entries(op.responses).filter(([status]) => status.startsWith('2')).map(([, r]) => r));
    // The public checkout's routes spend no quota and are documented by hand.
    expect(successes.filter((r) => r.headers && 'X-Quota-Remaining' in r.headers).length).toBeGreaterThan(10);
  }
  const core = (await (await fetch(`${t.coreUrl}/v1/openapi.json`)).json()) as any;
  expect(core.paths['/v1/organization/usage'].get['x-graphql-field']).toBe('Query.organizationUsage');
});
