import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useTestKeel } from '../../support/use-test-keel';
import { coreRoutes } from '../../../rest-compat/routes/core';
import { orderbookRoutes } from '../../../rest-compat/routes/orderbook';
import { buildHostSchema, printHostSchema, SCHEMA_FILES } from '../../../src/schema';

const { t, orgs: [org] } = useTestKeel({}, { orgs: 1 });
beforeAll(async () => {
  // Seven keys in all with onboarding's two.
  for (let i = 0; i < 5; i++) await org.core.post('/v1/api-keys', { name: `k${i}`, scopes: ['read'] });
});

describe('paging', () => {
  test('defaults are limit 50, offset 0; hasMore follows the total', async () => {
    const all = await org.core.get('/v1/api-keys');
    expect(all.body.total).toBe(7);
    expect(all.body.data).toHaveLength(7);
    const page = await org.core.get('/v1/api-keys?limit=3&offset=3');
    expect(page.body.data).toHaveLength(3);
    expect(page.body.hasMore).toBe(true);
    const last = await org.core.get('/v1/api-keys?limit=3&offset=6');
    expect(last.body.hasMore).toBe(false);
  });

  test.each([
    ['limit=101', 'limit'],
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['offset=-1', 'offset'],
    ['limit=1.5', 'limit'],
  ])('%s is 422 naming %s', async (query, field) => {
    const res = await org.core.get(`/v1/api-keys?${query}`);
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields[0].field).toBe(field);
  });

  test('GraphQL applies the same bounds', async () => {
    const res = await org.core.graphql('{ apiKeys(limit: 500) { total } }');
    expect(res.body.errors[0].extensions.code).toBe('INVALID_FIELD');
  });
});

describe('OpenAPI', () => {
  test.each([
    ['core', () => t.coreUrl, coreRoutes],
    ['pro', () => t.proUrl, orderbookRoutes],
  ] as const)('the %s document lists every row of the route table', async (_name, url, rows) => {
    const res = await fetch(`${url()}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc: any = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    for (const row of rows) {
      const op = doc.paths[row.path]?.[row.method.toLowerCase()];
      expect(op).toBeDefined();
      expect(op.responses[String(row.status ?? 200)]).toBeDefined();
    }
    // Every operation that runs a GraphQL field is a row; the rest (the public checkout) are documented by hand.
    const count = Object.values(doc.paths).reduce((n: number, p: any) => n + Object.values(p).filter((op: any) => op['x-graphql-field']).length, 0);
    expect(count).toBe(rows.length);
  });

  test('request bodies and list envelopes are described', async () => {
    const doc: any = await (await fetch(`${t.coreUrl}/v1/openapi.json`)).json();
    const create = doc.paths['/v1/api-keys'].post;
    expect(create.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateApiKeyInput');
    expect(doc.components.schemas.CreateApiKeyInput.required).toEqual(['name', 'scopes']);
    const list = doc.paths['/v1/api-keys'].get;
    const schema = list.responses['200'].content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(['data', 'total', 'hasMore']);
    expect(list.parameters.map((p: any) => p.name)).toEqual(['from', 'to', 'limit', 'offset']);
  });
});

test('the checked-in SDL matches the schema (run `npm run schema` after changing it)', async () => {
  for (const host of ['core', 'pro'] as const) {
    const current = printHostSchema(await buildHostSchema(host));
    const checkedIn = readFileSync(join(__dirname, '../../../schema', SCHEMA_FILES[host]), 'utf8');
    expect(checkedIn).toBe(current);
  }
});
