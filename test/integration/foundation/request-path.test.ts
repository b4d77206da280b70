import { startKeel, Keel } from '../../../src/app';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { ApiClient, ApiResponse } from '../../support/api-client';
import { eventually } from '../../support/eventually';

/**
 * What the request path promises while it answers from per-node caches and spends the rate limit
 * in one Redis call: a revocation still ends a key at once, and the rate limit is one budget
 * across nodes with the same headers and 429s.
 */
let t: TestKeel;
let org: TestOrg;
/** A second node on the same database and Redis. */
let second: Keel;

// Keys stay cached for ten minutes: a refusal below can only come from the invalidation, never from expiry.
const CACHE = { AUTH_CACHE_TTL_MS: 600_000 };

beforeAll(async () => {
  t = await startTestKeel(CACHE);
  org = await t.createOrg();
  second = await startKeel({ ...t.config, ...CACHE, KEEL_ROLES: 'api' });
});
afterAll(async () => {
  await second?.stop();
  await t?.stop();
});

const startOfNextSecond = () => new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));

test('a revoked key is refused at once on the node that revoked it, and on a second node, though both had it cached', async () => {
  const created = await org.core.post('/v1/api-keys', { name: 'cached', scopes: ['read'] });
  expect(created.status).toBe(201);
  const credentials = { apiKey: created.body.data.secret, orgId: org.orgId };
  const here = new ApiClient(t.coreUrl, credentials);
  const there = new ApiClient(second.core!.url, credentials);
  expect((await here.get('/v1/organization')).status).toBe(200);
  expect((await there.get('/v1/organization')).status).toBe(200);

  expect((await org.core.delete(`/v1/api-keys/${created.body.data.id}`)).status).toBe(200);
  const refused = await here.get('/v1/organization');
  expect({ status: refused.status, code: refused.body.error.code, message: refused.body.error.message }).toEqual({
    status: 401,
    code: 'UNAUTHORIZED',
    message: 'This API key has been revoked',
  });
  await eventually(async () => (await there.get('/v1/organization')).status === 401, 1_000, 20);
  expect((await there.get('/v1/organization')).body.error.message).toBe('This API key has been revoked');
});

test('the rate limit is one budget across nodes: every answer carries the tightest window, the sixth request in a second is 429', async () => {
  const starter = await t.createOrg({ tier: 'Starter' }); // 5 a second, 60 a minute, 10,000 a day
  const credentials = { apiKey: starter.adminKey, orgId: starter.orgId };
  const nodes = [new ApiClient(t.coreUrl, credentials), new ApiClient(second.core!.url, credentials)];
  await startOfNextSecond();
  const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => nodes[i % 2].get('/v1/organization')));
  const now = Math.floor(Date.now() / 1000);
  const ok = responses.filter((r) => r.status === 200);
  const limited = responses.filter((r) => r.status === 429);
  expect(ok).toHaveLength(5);
  expect(limited).toHaveLength(1);

  const headers = (r: ApiResponse) => ({
    limit: r.headers.get('x-ratelimit-limit'),
    remaining: Number(r.headers.get('x-ratelimit-remaining')),
    reset: Number(r.headers.get('x-ratelimit-reset')),
  });
  for (const r of ok) {
    expect(headers(r).limit).toBe('5');
    expect(headers(r).reset).toBeGreaterThanOrEqual(now);
    expect(headers(r).reset).toBeLessThanOrEqual(now + 2);
  }
  expect(ok.map((r) => headers(r).remaining).sort()).toEqual([0, 1, 2, 3, 4]);

  const [refused] = limited;
  expect(headers(refused)).toMatchObject({ limit: '5', remaining: 0 });
  expect(refused.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', message: 'Rate limit exceeded; retry after the reset time', details: { limit: 5, remaining: 0 } });
  expect(Date.parse(refused.body.error.details.resetAt) / 1000).toBe(headers(refused).reset);
});

test('each window is its own Redis counter, as before: per second, per minute and per day, each expiring with its window', async () => {
  const starter = await t.createOrg({ tier: 'Starter' });
  const keys = await t.keel.services.apiKeys.list(starter.orgId, { limit: 50, offset: 0 });
  const keyId = keys.items.find((k) => k.host === 'core')!.id;
  await startOfNextSecond();
  for (let i = 0; i < 3; i++) expect((await starter.core.get('/v1/organization')).status).toBe(200);
  const redis = t.keel.platform.redis;
  const windows = await Promise.all(
    ['s', 'm', 'd'].map(async (w) => {
      const key = `${t.config.REDIS_PREFIX}rl:Starter:${w}:${keyId}`;
      return { count: await redis.get(key), ttl: await redis.pTTL(key) };
    }),
  );
  expect(windows.map((w) => w.count)).toEqual(['3', '3', '3']);
  expect(windows[0].ttl).toBeGreaterThan(0);
  expect(windows[0].ttl).toBeLessThanOrEqual(1_000);
  expect(windows[1].ttl).toBeGreaterThan(1_000);
  expect(windows[1].ttl).toBeLessThanOrEqual(60_000);
  expect(windows[2].ttl).toBeGreaterThan(60_000);
  expect(windows[2].ttl).toBeLessThanOrEqual(86_400_000);
});
