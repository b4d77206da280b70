import { randomUUID } from 'node:crypto';
import { startKeel } from '../../../src/app';
import { useTestKeel } from '../../support/use-test-keel';
import { ApiClient } from '../../support/api-client';
import { UnitOfWork } from '../../../src/platform/db/unit-of-work';

const { t, orgs: [org] } = useTestKeel({}, { orgs: 1 });

const body = { name: 'idempotent', scopes: ['read'] };

test('a repeat returns 200 with the first body and Idempotent-Replayed, and does the work once', async () => {
  const key = randomUUID();
  const first = await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': key });
  const second = await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': key });
  expect(first.status).toBe(201);
  expect(second.status).toBe(200);
  expect(second.headers.get('idempotent-replayed')).toBe('true');
  expect(second.body).toEqual(first.body);
  const list = await org.core.get('/v1/api-keys?limit=100');
  expect(list.body.data.filter((k: any) => k.name === 'idempotent')).toHaveLength(1);
});

test('the same key with a different body, method or path is 422 VALIDATION_ERROR, details.fields naming Idempotency-Key', async () => {
  const key = randomUUID();
  await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': key });
  const otherBody = await org.core.post('/v1/api-keys', { ...body, name: 'changed' }, { 'Idempotency-Key': key });
  const otherPath = await org.core.delete(`/v1/api-keys/${randomUUID()}`, { 'Idempotency-Key': key });
  for (const res of [otherBody, otherPath]) {
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(/Idempotency-Key/);
    expect(res.body.error.details.fields).toEqual([{ field: 'Idempotency-Key', error: expect.stringMatching(/already used for a different request \(POST \/v1\/api-keys\)/) }]);
  }
});

test('a read or a path with no route claims no key: the same key then serves a write', async () => {
  const key = randomUUID();
  expect((await org.core.get('/v1/api-keys', { 'Idempotency-Key': key })).status).toBe(200);
  const unknown = await org.core.post('/v1/no-such-route', body, { 'Idempotency-Key': key });
  expect(unknown.status).toBe(404);
  expect(unknown.headers.get('idempotent-replayed')).toBeNull();
  const write = await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': key });
  expect(write.status).toBe(201);
});

test('a repeat while the first is still running is 409 CONFLICT, marked transient: details.reason IDEMPOTENCY_KEY_IN_PROGRESS and Retry-After', async () => {
  const keys = await t.keel.services.apiKeys.list(org.orgId, { limit: 100, offset: 0 });
  const admin = keys.items.find((k) => k.name === 'admin')!;
  const key = randomUUID();
  const claim = await t.keel.platform.idempotency.claim({ apiKeyId: admin.id, key, method: 'POST', path: '/v1/api-keys', body });
  expect(claim.kind).toBe('claimed');
  const res = await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': key });
  expect(res.status).toBe(409);
  expect(res.body.error.code).toBe('CONFLICT');
  expect(res.body.error.details).toEqual({ reason: 'IDEMPOTENCY_KEY_IN_PROGRESS' });
  expect(res.headers.get('retry-after')).toBe('1');
  // The claim stays the first request's: the refusal is not stored as the key's answer.
  const row = await t.keel.platform.db('idempotency_keys').where({ apiKeyId: admin.id, key }).first();
  expect(row.responseStatus).toBeNull();
});

test('over GraphQL, the repeat while the first runs carries the same marker in extensions, and Retry-After', async () => {
  const { apiKeyId } = await t.keel.platform.authenticator.authenticate('core', org.core.credentials);
  const key = randomUUID();
  const query = 'mutation { createApiKey(input: {name: "gql-in-progress", scopes: ["read"]}) { id } }';
  expect((await t.keel.platform.idempotency.claim({ apiKeyId, key, method: 'POST', path: '/graphql', body: { query } })).kind).toBe('claimed');
  const res = await org.core.graphql(query, undefined, { 'Idempotency-Key': key });
  expect(res.status).toBe(409);
  expect(res.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', details: { reason: 'IDEMPOTENCY_KEY_IN_PROGRESS' } });
  expect(res.headers.get('retry-after')).toBe('1');
});

test('keys are scoped to the API key: another key may reuse the same value', async () => {
  const key = randomUUID();
  const other = await t.createOrg();
  expect((await org.core.post('/v1/api-keys', { name: 'a', scopes: ['read'] }, { 'Idempotency-Key': key })).status).toBe(201);
  expect((await other.core.post('/v1/api-keys', { name: 'b', scopes: ['read'] }, { 'Idempotency-Key': key })).status).toBe(201);
});

test('errors are replayed too, and a malformed key is refused', async () => {
  const key = randomUUID();
  const first = await org.core.post('/v1/api-keys', { name: 'x', scopes: ['nope'] }, { 'Idempotency-Key': key });
  const again = await org.core.post('/v1/api-keys', { name: 'x', scopes: ['nope'] }, { 'Idempotency-Key': key });
  expect(first.status).toBe(422);
  expect(again.status).toBe(422);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  const bad = await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': 'x'.repeat(300) });
  expect(bad.status).toBe(422);
});

test('stored responses survive a restart (they live in PostgreSQL)', async () => {
  const key = randomUUID();
  const first = await org.core.post('/v1/api-keys', { name: 'durable', scopes: ['read'] }, { 'Idempotency-Key': key });
  const second = await startKeel({ ...t.config, KEEL_ROLES: 'api' });
  try {
    const client = new ApiClient(second.core!.url, org.core.credentials);
    const replay = await client.post('/v1/api-keys', { name: 'durable', scopes: ['read'] }, { 'Idempotency-Key': key });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
  } finally {
    await second.stop();
  }
});

test("a keyed request's unit-of-work scope closes with its response, so no scope stays open between requests", async () => {
  const key = randomUUID();
  const answers = await Promise.all([
    org.core.post('/v1/api-keys', { name: 'scoped', scopes: ['read'] }, { 'Idempotency-Key': key }),
    org.core.post('/v1/api-keys', { name: 'x', scopes: ['nope'] }, { 'Idempotency-Key': randomUUID() }),
    org.core.get('/v1/api-keys', { 'Idempotency-Key': randomUUID() }),
  ]);
  expect(answers.map((a) => a.status)).toEqual([201, 422, 200]);
  expect((await org.core.post('/v1/api-keys', { name: 'scoped', scopes: ['read'] }, { 'Idempotency-Key': key })).headers.get('idempotent-replayed')).toBe('true');
  // Each scope closes as its answer is made (onSend); the loop gives the last answers time to finish.
  for (let i = 0; i < 50 && UnitOfWork.openScopes > 0; i++) await new Promise((r) => setTimeout(r, 20));
  expect(UnitOfWork.openScopes).toBe(0);
});

test('a keyed request whose client goes away before its work still records the work on its claim', async () => {
  const key = randomUUID();
  const body = { name: 'abandoned', scopes: ['read'] };
  const { apiKeyId } = await t.keel.platform.authenticator.authenticate('core', org.core.credentials);
  // Holds the request at its claim: an uncommitted row of the same key makes its INSERT wait.
  const db = t.keel.platform.db;
  const blocker = await db.transaction();
  await blocker('idempotency_keys').insert({ apiKeyId, key, fingerprint: 'blocker', method: 'POST', path: '/blocker', lockedAt: db.fn.now(), expiresAt: db.fn.now() });
  try {
    const client = new AbortController();
    const sent = fetch(`${t.coreUrl}/v1/api-keys`, {
      method: 'POST',
      headers: { apiKey: org.core.credentials.apiKey!, orgId: org.core.credentials.orgId!, 'content-type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(body),
      signal: client.signal,
    }).catch((e: unknown) => e);
    const waiting = async () => Number((await db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO idempotency_keys%'`)).rows[0].n);
    for (let i = 0; i < 100 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await waiting()).toBe(1);
    client.abort();
    expect(await sent).toMatchObject({ name: 'AbortError' });
    // The server sees the connection close before the claim goes through.
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    await blocker.rollback();
  }

  const settled = async () => db('idempotency_keys').where({ apiKeyId, key }).first();
  for (let i = 0; i < 100 && (await settled())?.responseStatus == null; i++) await new Promise((r) => setTimeout(r, 20));
  const claim = await settled();
  expect(claim.responseStatus).toBe(201);
  expect(Object.keys(claim.results)).not.toHaveLength(0);
  const retry = await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': key });
  expect(retry.status).toBe(200);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(await db('api_keys').where({ name: 'abandoned' }).count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);
});
