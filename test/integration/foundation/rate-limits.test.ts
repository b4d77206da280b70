import { useTestKeel } from '../../support/use-test-keel';

const { t } = useTestKeel();

test('every response carries the tightest window; the sixth request in a second on Starter is 429', async () => {
  const org = await t.createOrg({ tier: 'Starter' });
  // Start at the beginning of a fresh second so all six land in one window.
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  const responses = await Promise.all(Array.from({ length: 6 }, () => org.core.get('/v1/organization')));
  const ok = responses.filter((r) => r.status === 200);
  const limited = responses.filter((r) => r.status === 429);
  expect(ok).toHaveLength(5);
  expect(limited).toHaveLength(1);
  for (const r of ok) {
    expect(r.headers.get('x-ratelimit-limit')).toBe('5');
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
  }
  expect(ok.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort()).toEqual([0, 1, 2, 3, 4]);
  const body = limited[0].body;
  expect(body.error.code).toBe('RATE_LIMIT_EXCEEDED');
  expect(body.error.details).toMatchObject({ limit: 5, remaining: 0 });
  expect(Number.isNaN(Date.parse(body.error.details.resetAt))).toBe(false);
  expect(limited[0].headers.get('x-ratelimit-remaining')).toBe('0');
});

test('the budget is per key and shared by every node through Redis', async () => {
  const org = await t.createOrg({ tier: 'Starter' });
  const second = await t.keel.services.apiKeys.issue({ organizationId: org.orgId, name: 'b', host: 'core', scopes: ['read'], tier: 'Starter' });
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  const a = await Promise.all(Array.from({ length: 5 }, () => org.core.get('/v1/organization')));
  const b = await Promise.all(Array.from({ length: 5 }, () => org.core.with({ apiKey: second.secret, orgId: org.orgId }).get('/v1/organization')));
  expect([...a, ...b].every((r) => r.status === 200)).toBe(true);
  const keys = [];
  for await (const k of t.keel.platform.redis.scanIterator({ MATCH: `${t.config.REDIS_PREFIX}rl:*`, COUNT: 100 })) keys.push(...k);
  expect(keys.length).toBeGreaterThan(0);
});

test('the pro host is rate limited too', async () => {
  const org = await t.createOrg({ tier: 'Starter' });
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  const responses = await Promise.all(Array.from({ length: 7 }, () => org.pro.get('/v1/orderbook/engine/status')));
  expect(responses.filter((r) => r.status === 429).length).toBe(2);
});
