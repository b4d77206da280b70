import { randomUUID } from 'node:crypto';
import { useTestKeel } from '../../support/use-test-keel';
import type { ApiClient } from '../../support/api-client';

let lists: { host: 'core' | 'pro'; path: string; query: string[] }[];

/** Every GET route of a host's OpenAPI document that pages with `limit`, path parameters filled in. */
async function listRoutes(client: ApiClient, host: 'core' | 'pro') {
  const doc = (await client.get('/v1/openapi.json')).body;
  return Object.entries(doc.paths as Record<string, { get?: { parameters: { name: string; in: string }[] } }>)
    .filter(([, ops]) => ops.get?.parameters.some((p) => p.in === 'query' && p.name === 'limit'))
    .map(([path, ops]) => ({
      host,
      path: path.replace(/\{(\w+)\}/g, (_m, name: string) => (/symbol/i.test(name) ? 'ETH-USDC' : randomUUID())),
      query: ops.get!.parameters.filter((p) => p.in === 'query').map((p) => p.name),
    }));
}

// Every route of both hosts in a burst: this is not a rate-limit test.
const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100 }, { orgs: 1 });
beforeAll(async () => {
  lists = [...(await listRoutes(org.core, 'core')), ...(await listRoutes(org.pro, 'pro'))];
});

const client = (host: 'core' | 'pro') => (host === 'core' ? org.core : org.pro);

function expectFieldError(res: { status: number; body: any }, field: string) {
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('INVALID_FIELD');
  expect(res.body.error.details.fields).toEqual([{ field, error: expect.any(String) }]);
}

test('both hosts have list routes to check', () => {
  expect(lists.filter((l) => l.host === 'core').length).toBeGreaterThanOrEqual(8);
  expect(lists.filter((l) => l.host === 'pro').length).toBeGreaterThanOrEqual(4);
});

test('on every list, a repeated query parameter is 422 naming it', async () => {
  for (const { host, path } of lists) {
    expectFieldError(await client(host).get(`${path}?limit=1&limit=2`), 'limit');
  }
});

test('on every list, the array form of a query parameter is 422 naming it', async () => {
  for (const { host, path } of lists) {
    expectFieldError(await client(host).get(`${path}?limit[]=1`), 'limit[]');
  }
});

test('on every list, an unknown query parameter is 422 naming it', async () => {
  for (const { host, path } of lists) {
    expectFieldError(await client(host).get(`${path}?colour=red`), 'colour');
  }
});

test('several faults at once are one 422 VALIDATION_ERROR listing each', async () => {
  const res = await org.core.get('/v1/api-keys?colour=red&limit=1&limit=2');
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('VALIDATION_ERROR');
  expect(res.body.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(['colour', 'limit']);
});

test('known parameters given once still work', async () => {
  const res = await org.core.get('/v1/api-keys?limit=1&offset=0');
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(1);
});

describe('the date range (from, to: ISO 8601, on the creation time)', () => {
  test('on every list, a bad date is 422 naming it', async () => {
    for (const { host, path, query } of lists) {
      expect(query).toEqual(expect.arrayContaining(['from', 'to']));
      expectFieldError(await client(host).get(`${path}?from=yesterday`), 'from');
      expectFieldError(await client(host).get(`${path}?to=2026-02-30`), 'to');
      expectFieldError(await client(host).get(`${path}?to=2026-01-01T24:00:00Z`), 'to');
    }
  });

  test('on every list, from later than to is 422 naming from', async () => {
    for (const { host, path } of lists) {
      expectFieldError(await client(host).get(`${path}?from=2026-01-02T00:00:00Z&to=2026-01-01`), 'from');
    }
  });

  test('selects API keys by creation time, over REST and GraphQL', async () => {
    const first = (await org.core.post('/v1/api-keys', { name: 'first', scopes: ['read'] })).body.data;
    await new Promise((r) => setTimeout(r, 20));
    const second = (await org.core.post('/v1/api-keys', { name: 'second', scopes: ['read'] })).body.data;
    const names = async (query: string) => (await org.core.get(`/v1/api-keys?${query}`)).body.data.map((k: { name: string }) => k.name);

    expect(await names(`from=${encodeURIComponent(second.createdAt)}`)).toEqual(['second']);
    expect(await names(`from=${encodeURIComponent(first.createdAt)}&to=${encodeURIComponent(first.createdAt)}`)).toEqual(['first']);
    const day = first.createdAt.slice(0, 10);
    expect(await names(`from=${day}&to=${day}`)).toEqual(expect.arrayContaining(['first', 'second']));
    const list = await org.core.get(`/v1/api-keys?from=2999-01-01`);
    expect(list.body).toMatchObject({ data: [], total: 0, hasMore: false });

    const gql = await org.core.graphql('query ($from: String) { apiKeys(from: $from) { total items { name } } }', { from: second.createdAt });
    expect(gql.body.data.apiKeys.items.map((k: { name: string }) => k.name)).toEqual(['second']);
    const bad = await org.core.graphql('{ apiKeys(from: "2026-13-01") { total } }');
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'from' }] } });
  });

  test('on the order-book host too', async () => {
    const all = await org.pro.get('/v1/orderbook/markets');
    const future = await org.pro.get('/v1/orderbook/markets?from=2999-01-01T00:00:00%2B02:00');
    expect(future.status).toBe(200);
    expect(future.body.meta.total).toBe(0);
    const past = await org.pro.get('/v1/orderbook/markets?to=2999-01-01');
    expect(past.body.meta.total).toBe(all.body.meta.total);
  });
});
