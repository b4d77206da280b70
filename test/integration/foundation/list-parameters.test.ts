import { randomUUID } from 'node:crypto';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import type { ApiClient } from '../../support/api-client';

let t: TestKeel;
let org: TestOrg;
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

beforeAll(async () => {
  t = await startTestKeel();
  org = await t.createOrg();
  lists = [...(await listRoutes(org.core, 'core')), ...(await listRoutes(org.pro, 'pro'))];
});
afterAll(() => t.stop());

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
