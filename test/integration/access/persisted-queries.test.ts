import { createHash } from 'node:crypto';
import { startKeel, Keel } from '../../../src/app';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { ApiClient } from '../../support/api-client';

let t: TestKeel;
let org: TestOrg;
/** Another node on the same Redis: a document registered on one is known to every node. */
let second: Keel;

beforeAll(async () => {
  t = await startTestKeel();
  org = await t.createOrg();
  second = await startKeel({ ...t.config, KEEL_ROLES: 'api' });
});
afterAll(async () => {
  await second?.stop();
  await t?.stop();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(query) } });

/** A document no other test registers: the run's hashes start unknown. */
let n = 0;
const unique = (query: string) => `${query} # ${Date.now()}-${++n}`;

/** GET /graphql with the hash (and variables) in the query string, as a CDN-cacheable request. */
function getPersisted(client: ApiClient, query: string, variables?: Record<string, unknown>, headers?: Record<string, string>) {
  const params = new URLSearchParams({ extensions: JSON.stringify(persisted(query)) });
  if (variables) params.set('variables', JSON.stringify(variables));
  return client.get(`/graphql?${params}`, headers);
}

test('an unknown hash is the APQ PERSISTED_QUERY_NOT_FOUND error; the document sent once with it is then run by hash, over POST and GET', async () => {
  const query = unique('query Org { organization { id name } }');
  const miss = await org.core.request('POST', '/graphql', { body: { extensions: persisted(query) } });
  expect(miss.status).toBe(200);
  expect(miss.body.data).toBeUndefined();
  expect(miss.body.errors).toHaveLength(1);
  expect(miss.body.errors[0]).toMatchObject({ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } });

  const registered = await org.core.request('POST', '/graphql', { body: { query, extensions: persisted(query) } });
  expect(registered.body).toEqual({ data: { organization: { id: org.orgId, name: org.name } } });

  const hit = await org.core.request('POST', '/graphql', { body: { extensions: persisted(query) } });
  expect(hit.body).toEqual(registered.body);
  const viaGet = await getPersisted(org.core, query);
  expect(viaGet.status).toBe(200);
  expect(viaGet.body).toEqual(registered.body);
});

test('a hash registered on one node runs on another (the documents are in Redis), with variables over GET', async () => {
  const query = unique('query Key($id: ID!) { apiKey(id: $id) { id name } }');
  const keys = await org.core.get('/v1/api-keys');
  const key = keys.body.data[0];
  const first = await org.core.request('POST', '/graphql', { body: { query, variables: { id: key.id }, extensions: persisted(query) } });
  expect(first.body.data.apiKey).toEqual({ id: key.id, name: key.name });

  const elsewhere = org.core.with({ apiKey: org.adminKey, orgId: org.orgId });
  const there = await getPersisted(new ApiClient(second.core!.url, elsewhere.credentials), query, { id: key.id });
  expect(there.body).toEqual(first.body);
});

test('works on the order-book host too', async () => {
  const query = unique('{ markets { total } }');
  expect((await org.pro.request('POST', '/graphql', { body: { extensions: persisted(query) } })).body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  expect((await org.pro.request('POST', '/graphql', { body: { query, extensions: persisted(query) } })).body.data.markets.total).toBeGreaterThanOrEqual(0);
  expect((await getPersisted(org.pro, query)).body.data.markets.total).toBeGreaterThanOrEqual(0);
});

test('a mutation is never run over GET, persisted or not', async () => {
  const mutation = unique('mutation { createApiKey(input: {name: "apq", scopes: ["read"]}) { id } }');
  // Registered (and run once) over POST.
  expect((await org.core.request('POST', '/graphql', { body: { query: mutation, extensions: persisted(mutation) } })).body.data.createApiKey.id).toBeDefined();
  const before = (await org.core.get('/v1/api-keys')).body.total;

  const byHash = await getPersisted(org.core, mutation);
  expect(byHash.status).toBe(405);
  expect(byHash.body.errors[0].message).toMatch(/GET requests only support query operations/);
  const byText = await org.core.get(`/graphql?${new URLSearchParams({ query: mutation })}`);
  expect(byText.status).toBe(405);
  expect((await org.core.get('/v1/api-keys')).body.total).toBe(before);
});

test('the same limits apply: a document over them is refused and never stored', async () => {
  const aliases = Array.from({ length: t.config.GRAPHQL_MAX_ALIASES + 1 }, (_, i) => `o${i}: organization { id }`).join(' ');
  const query = unique(`{ ${aliases} }`);
  const refused = await org.core.request('POST', '/graphql', { body: { query, extensions: persisted(query) } });
  expect(refused.body.data).toBeUndefined();
  expect(refused.body.errors[0].message).toMatch(/alias/i);
  const later = await org.core.request('POST', '/graphql', { body: { extensions: persisted(query) } });
  expect(later.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');

  const mismatch = await org.core.request('POST', '/graphql', { body: { query: '{ organization { id } }', extensions: persisted('{ organization { name } }') } });
  expect(mismatch.status).toBe(400);
});

test('the same authentication and authorisation apply: checked on the document a hash stands for, before it runs', async () => {
  const query = unique('{ apiKeys { total } }');
  await org.core.request('POST', '/graphql', { body: { query, extensions: persisted(query) } });

  const created = await org.core.post('/v1/api-keys', { name: 'apq reader', scopes: ['read'] });
  const reader = org.core.with({ apiKey: created.body.data.secret, orgId: org.orgId });
  const forbidden = await getPersisted(reader, query);
  expect(forbidden.status).toBe(403);
  expect(forbidden.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN' });
  expect(forbidden.body.errors[0].message).toMatch(/lacks the scope 'admin'/);

  const anonymous = await getPersisted(new ApiClient(t.coreUrl, {}), query);
  expect(anonymous.status).toBe(401);

  // A browser's read-only token, as a dashboard would send it.
  const token = (await org.core.post('/v1/tokens', { scopes: ['read'] })).body.data.token;
  const byToken = await getPersisted(new ApiClient(t.coreUrl, {}), query, undefined, { Authorization: `Bearer ${token}` });
  expect(byToken.status).toBe(403);
  const allowed = unique('{ organization { id } }');
  await org.core.request('POST', '/graphql', { body: { query: allowed, extensions: persisted(allowed) } });
  expect((await getPersisted(new ApiClient(t.coreUrl, {}), allowed, undefined, { Authorization: `Bearer ${token}` })).body.data.organization.id).toBe(org.orgId);
});
