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
  // When to send again: whole seconds, at least 1, until the exceeded window resets (here the second's).
  expect(limited[0].headers.get('retry-after')).toBe('1');
  expect(ok.every((r) => !r.headers.has('retry-after'))).toBe(true);
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
  const limited = responses.filter((r) => r.status === 429);
  expect(limited.length).toBe(2);
  for (const r of limited) expect(r.headers.get('retry-after')).toBe('1');
});

test("a key over its minute's budget is told to wait until that window resets, in whole seconds", async () => {
  const org = await t.createOrg({ tier: 'Starter' }); // 60 a minute
  expect((await org.core.get('/v1/organization')).status).toBe(200);
  const key = await t.keel.platform.db('api_keys').where({ organization_id: org.orgId, host: 'core' }).first();
  // The rest of the minute spent behind the second's back, as 59 requests spread over it would.
  await t.keel.platform.redis.incrBy(`${t.config.REDIS_PREFIX}rl:Starter:m:${key.id}`, 59);
  const refused = await org.core.get('/v1/organization');
  expect(refused.status).toBe(429);
  const wait = Number(refused.headers.get('retry-after'));
  expect(Number.isInteger(wait)).toBe(true);
  const untilReset = Number(refused.headers.get('x-ratelimit-reset')) - Date.now() / 1000;
  expect(wait).toBeGreaterThanOrEqual(Math.floor(untilReset));
  expect(wait).toBeLessThanOrEqual(Math.ceil(untilReset) + 1);
  expect(wait).toBeGreaterThan(50);
});

/** A mutation document creating `n` API keys under aliases (k0, k1, …): `n` root fields, each the work of one REST call. */
const createKeys = (n: number) =>
  `mutation { ${Array.from({ length: n }, (_, i) => `k${i}: createApiKey(input: {name: "k${i}", scopes: ["read"]}) { id }`).join(' ')} }`;
const remaining = (r: { headers: Headers }, budget: 'ratelimit' | 'quota') => Number(r.headers.get(`x-${budget}-remaining`));
const limit = (r: { headers: Headers }, budget: 'ratelimit' | 'quota') => Number(r.headers.get(`x-${budget}-limit`));

test('a GraphQL document spends one request per mutation it runs, of the rate limit and the monthly quota; a query document spends one', async () => {
  const writer = await t.createOrg({ tier: 'Starter' });
  const created = await writer.core.graphql(createKeys(5));
  expect(created.status).toBe(200);
  expect(Object.keys(created.body.data)).toHaveLength(5);
  expect(limit(created, 'ratelimit')).toBe(5);
  expect(remaining(created, 'ratelimit')).toBe(0);
  expect(remaining(created, 'quota')).toBe(limit(created, 'quota') - 5);

  const reader = await t.createOrg({ tier: 'Starter' });
  const read = await reader.core.graphql('{ organization { id } a: apiKeys { total } b: apiKeys { total } }');
  expect(read.status).toBe(200);
  expect(remaining(read, 'ratelimit')).toBe(4);
  expect(remaining(read, 'quota')).toBe(limit(read, 'quota') - 1);
});

test('a mutation document the budget cannot hold is refused whole (429) before any of its mutations runs, and spends only its arrival; a REST call spends one', async () => {
  const org = await t.createOrg({ tier: 'Starter' });
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  const refused = await org.core.graphql(createKeys(6));
  expect(refused.status).toBe(429);
  expect(refused.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 5, remaining: 4 } });
  expect(remaining(refused, 'ratelimit')).toBe(4);
  expect(refused.headers.get('retry-after')).toBe('1');

  const rest = await org.core.post('/v1/api-keys', { name: 'one', scopes: ['read'] });
  expect(rest.status).toBe(201);
  expect(remaining(rest, 'ratelimit')).toBe(3);
  const keys = await org.core.get('/v1/api-keys');
  expect(keys.body.data.map((k: { name: string }) => k.name)).not.toContain('k0');

  // A document over the query limits runs nothing: 400, and only its arrival is spent.
  const other = await t.createOrg({ tier: 'Starter' });
  const overAliases = await other.core.graphql(createKeys(t.config.GRAPHQL_MAX_ALIASES + 2));
  expect(overAliases.status).toBe(400);
  expect(remaining(overAliases, 'ratelimit')).toBe(4);

  // So does a mutation over GET, which GraphQL never runs.
  const getter = await t.createOrg({ tier: 'Starter' });
  const overGet = await getter.core.get(`/graphql?query=${encodeURIComponent(createKeys(3))}`);
  expect(overGet.status).not.toBe(200);
  expect(remaining(overGet, 'ratelimit')).toBe(4);
  expect((await getter.core.get('/v1/api-keys')).body.data.map((k: { name: string }) => k.name)).not.toContain('k0');
});

test('a replay (the same Idempotency-Key) spends one request, its arrival, however many mutations its document ran: as a replayed REST call does', async () => {
  const org = await t.createOrg({ tier: 'Starter' });
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  const key = { 'Idempotency-Key': `replay-${Date.now()}` };
  const first = await org.core.graphql(createKeys(3), undefined, key);
  expect(first.status).toBe(200);
  expect(remaining(first, 'ratelimit')).toBe(2);
  const quotaAfterFirst = remaining(first, 'quota');

  const replay = await org.core.graphql(createKeys(3), undefined, key);
  expect(replay.status).toBe(200);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.body).toEqual(first.body);
  expect(remaining(replay, 'ratelimit')).toBe(1);
  expect(remaining(replay, 'quota')).toBe(quotaAfterFirst - 1);

  const rest = { 'Idempotency-Key': `replay-rest-${Date.now()}` };
  const created = await org.core.post('/v1/api-keys', { name: 'one', scopes: ['read'] }, rest);
  expect([created.status, remaining(created, 'ratelimit')]).toEqual([201, 0]);
  // The second's window started with the first request, before this one: it has ended a second after this answer.
  await new Promise((r) => setTimeout(r, 1_100));
  const replayedRest = await org.core.post('/v1/api-keys', { name: 'one', scopes: ['read'] }, rest);
  expect([replayedRest.status, replayedRest.headers.get('idempotent-replayed'), remaining(replayedRest, 'ratelimit')]).toEqual([200, 'true', 4]);
  expect(remaining(replayedRest, 'quota')).toBe(remaining(created, 'quota') - 1);
});

test('a mutation document refused for want of budget (429) keeps nothing under its Idempotency-Key: sent again after Retry-After, it runs', async () => {
  const org = await t.createOrg({ tier: 'Starter' });
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  await Promise.all(Array.from({ length: 3 }, () => org.core.get('/v1/organization')));
  const key = { 'Idempotency-Key': `refused-${Date.now()}` };
  const refused = await org.core.graphql(createKeys(3), undefined, key);
  expect(refused.status).toBe(429);
  await new Promise((r) => setTimeout(r, Number(refused.headers.get('retry-after')) * 1000));
  const again = await org.core.graphql(createKeys(3), undefined, key);
  expect(again.status).toBe(200);
  expect(again.headers.get('idempotent-replayed')).toBeNull();
  expect(Object.keys(again.body.data)).toHaveLength(3);
});
