import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { startKeel, Keel } from '../../../src/app';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { ApiClient } from '../../support/api-client';
import { eventually } from '../../support/eventually';

let t: TestKeel;
let org: TestOrg;
/** Another node on the same Redis: a document registered on one is known to every node. */
let second: Keel;

/** Small quotas, so a test reaches them; no per-node memory in front, so what Redis holds is what answers. */
const QUOTA = { APQ_MAX_DOCUMENTS_PER_ORGANIZATION: 20, APQ_MAX_BYTES_PER_ORGANIZATION: 16 * 1024, APQ_MAX_DOCUMENT_BYTES: 4 * 1024, APQ_LOCAL_ENTRIES: 0 };

beforeAll(async () => {
  t = await startTestKeel({ ...QUOTA, RATE_LIMIT_SCALE: 100 });
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

/** GET /graphql with the hash (and variables) in the query string. */
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

test('an answer by hash over GET is kept by no cache, browser or CDN: it is one organisation\'s, for the credentials in its headers, as docs/browser-access.md says', async () => {
  const query = unique('query Org { organization { id name } }');
  await org.core.request('POST', '/graphql', { body: { query, extensions: persisted(query) } });
  const viaGet = await getPersisted(org.core, query);
  expect(viaGet.status).toBe(200);
  expect(viaGet.headers.get('cache-control')).toBe('no-store');
  expect((await org.core.request('POST', '/graphql', { body: { extensions: persisted(query) } })).headers.get('cache-control')).toBe('no-store');
  const guide = readFileSync(join(__dirname, '../../../docs/browser-access.md'), 'utf8').replace(/\s+/g, ' ');
  expect(guide).toContain('every GraphQL answer, by hash or not, is `Cache-Control: no-store`');
  expect(guide).not.toMatch(/(browser|CDN) (can )?cache/);
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

test('a document sent with its hash is registered for its own request, not for its X-Request-Id: another organisation sending the same id meanwhile does not get it', async () => {
  const other = await t.createOrg();
  const requestId = `shared-request-id-${Date.now()}`;
  const held = unique('{ agents { total } }');
  // Both keys authenticated once, so neither request reads anything but what it asks for.
  expect((await org.core.graphql('{ organization { id } }')).body.data.organization.id).toBe(org.orgId);
  expect((await other.core.graphql('{ organization { id } }')).body.data.organization.id).toBe(other.orgId);

  // org's request is held between its registration (once its document has validated) and its
  // answer: its resolver waits for the agents table, locked here.
  const db = t.keel.platform.db;
  const lock = await db.transaction();
  let registering: ReturnType<ApiClient['request']> | undefined;
  try {
    await lock.raw('LOCK TABLE agents IN ACCESS EXCLUSIVE MODE');
    registering = org.core.request('POST', '/graphql', { body: { query: held, extensions: persisted(held) }, headers: { 'X-Request-Id': requestId } });
    await eventually(async () => (await t.keel.platform.redis.get(`${t.config.REDIS_PREFIX}core:apq:${org.orgId}:doc:${sha256(held)}`)) === held);
    // Meanwhile, another organisation's request with the same X-Request-Id.
    const meanwhile = await other.core.request('POST', '/graphql', { body: { query: '{ organization { id } }' }, headers: { 'X-Request-Id': requestId } });
    expect(meanwhile.headers.get('x-request-id')).toBe(requestId);
    expect(meanwhile.body.data.organization.id).toBe(other.orgId);
  } finally {
    await lock.commit();
  }
  expect((await registering!).body).toEqual({ data: { agents: { total: 0 } } });

  const byHash = (client: ApiClient) => client.request('POST', '/graphql', { body: { extensions: persisted(held) } });
  expect((await byHash(other.core)).body).toEqual({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
  expect((await byHash(org.core)).body).toEqual({ data: { agents: { total: 0 } } });
});

describe('each organisation has quotas: a key, however narrow, cannot fill Redis', () => {
  const register = (client: ApiClient, query: string) => client.request('POST', '/graphql', { body: { query, extensions: persisted(query) } });
  const byHash = (client: ApiClient, query: string) => client.request('POST', '/graphql', { body: { extensions: persisted(query) } });
  const known = async (client: ApiClient, query: string) => (await byHash(client, query)).body.errors?.[0]?.extensions?.code !== 'PERSISTED_QUERY_NOT_FOUND';
  const redis = () => t.keel.platform.redis;
  const orgKeys = (orgId: string) => `${t.config.REDIS_PREFIX}core:apq:${orgId}:`;
  const usage = async (orgId: string) => ({
    documents: await redis().zCard(`${orgKeys(orgId)}lru`),
    bytes: Number((await redis().get(`${orgKeys(orgId)}bytes`)) ?? 0),
  });
  /** A read-only key of a fresh organisation. */
  async function reader(): Promise<{ orgId: string; client: ApiClient }> {
    const fresh = await t.createOrg();
    const created = await fresh.core.post('/v1/api-keys', { name: 'apq reader', scopes: ['read'] });
    return { orgId: fresh.orgId, client: fresh.core.with({ apiKey: created.body.data.secret, orgId: fresh.orgId }) };
  }
  /** The n-th document of a run, padded with a comment to about `bytes` raw bytes. */
  const doc = (run: string, n: number, bytes = 0) => `{ organization { id } } # ${run} ${n} ${'.'.repeat(Math.max(0, bytes - 40))}`;

  test('count: past APQ_MAX_DOCUMENTS_PER_ORGANIZATION the least recently used of its own go first; another organisation keeps its documents', async () => {
    const a = await reader();
    const b = await reader();
    const theirs = unique('{ organization { name } }');
    expect((await register(b.client, theirs)).body.data.organization).toBeDefined();
    // A hash is each organisation's own: b's document is unknown to a.
    expect(await known(a.client, theirs)).toBe(false);

    const run = unique('count');
    const docs = Array.from({ length: QUOTA.APQ_MAX_DOCUMENTS_PER_ORGANIZATION }, (_, i) => doc(run, i));
    for (const d of docs) expect((await register(a.client, d)).body.data.organization.id).toBe(a.orgId);
    expect((await usage(a.orgId)).documents).toBe(QUOTA.APQ_MAX_DOCUMENTS_PER_ORGANIZATION);
    // Used just now, the oldest is no longer the least recently used: the second goes instead.
    expect(await known(a.client, docs[0])).toBe(true);
    await register(a.client, doc(run, 100));
    expect((await usage(a.orgId)).documents).toBe(QUOTA.APQ_MAX_DOCUMENTS_PER_ORGANIZATION);
    expect(await known(a.client, docs[1])).toBe(false);
    expect(await known(a.client, docs[0])).toBe(true);
    expect(await known(a.client, doc(run, 100))).toBe(true);
    expect(await known(b.client, theirs)).toBe(true);
  });

  test('bytes: at most APQ_MAX_BYTES_PER_ORGANIZATION, counted in raw bytes', async () => {
    const a = await reader();
    const run = unique('bytes');
    for (let i = 0; i < 12; i++) await register(a.client, doc(run, i, 3_000));
    const { documents, bytes } = await usage(a.orgId);
    expect(bytes).toBeLessThanOrEqual(QUOTA.APQ_MAX_BYTES_PER_ORGANIZATION);
    expect(documents).toBe(Math.floor(QUOTA.APQ_MAX_BYTES_PER_ORGANIZATION / Buffer.byteLength(doc(run, 0, 3_000))));
    expect(await known(a.client, doc(run, 11, 3_000))).toBe(true);
    expect(await known(a.client, doc(run, 0, 3_000))).toBe(false);
  });

  test('size cap: a document over APQ_MAX_DOCUMENT_BYTES of comments and whitespace runs, and is not kept', async () => {
    const a = await reader();
    const padded = `${unique('{ organization { id } }')}\n${'#'.repeat(2_000)}\n${' '.repeat(2_500)}`;
    expect(Buffer.byteLength(padded)).toBeGreaterThan(QUOTA.APQ_MAX_DOCUMENT_BYTES);
    expect((await register(a.client, padded)).body.data.organization.id).toBe(a.orgId);
    expect(await known(a.client, padded)).toBe(false);
    expect(await usage(a.orgId)).toEqual({ documents: 0, bytes: 0 });
  });

  test('a read-only key registering documents in a loop stays within its quota, in documents, bytes and Redis memory', async () => {
    const a = await reader();
    const run = unique('loop');
    for (let i = 0; i < 120; i++) expect((await register(a.client, doc(run, i, 1_000))).status).toBe(200);
    const { documents, bytes } = await usage(a.orgId);
    expect(documents).toBeLessThanOrEqual(QUOTA.APQ_MAX_DOCUMENTS_PER_ORGANIZATION);
    expect(bytes).toBeLessThanOrEqual(QUOTA.APQ_MAX_BYTES_PER_ORGANIZATION);
    // What Redis itself spends on the organisation's keys: its quota and bookkeeping, not 120 documents.
    let memory = 0;
    let keys = 0;
    for await (const batch of redis().scanIterator({ MATCH: `${orgKeys(a.orgId)}*`, COUNT: 1000 })) {
      for (const key of ([] as string[]).concat(batch)) {
        memory += (await redis().memoryUsage(key)) ?? 0;
        keys++;
      }
    }
    expect(keys).toBe(documents + 3);
    expect(memory).toBeLessThan(2 * QUOTA.APQ_MAX_BYTES_PER_ORGANIZATION);
    expect(memory).toBeLessThan(120 * 1_000);
  });
});
