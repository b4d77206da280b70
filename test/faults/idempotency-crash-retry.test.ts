import { randomUUID } from 'node:crypto';
import { startTestKeel, TestKeel, TestOrg } from '../support/keel';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { ApiClient } from '../support/api-client';
import { SessionHolder } from '../../src/platform/db/session-holder';
import { IdempotencyStore } from '../../src/platform/idempotency';

/**
 * Fault: a Keel child process (api role) is killed with SIGKILL in the middle of a request that
 * holds an Idempotency-Key: after the first of its units of work committed (failpoint
 * after-commit:webhook.create), before the rest ran and before any answer. The client retries
 * with the same key at once, on a live node of the same database (the test's own Keel).
 * Survives: the retry is answered within 2 s of the death (the dead process's claim is free as
 * soon as its PostgreSQL session is gone, not after IDEMPOTENCY_LOCK_SECONDS, left at its 60 s
 * default here), the committed step is replayed, not run again, and the rest runs once.
 */
const RETRY_WITHIN_MS = 2_000;

let t: TestKeel;
let org: TestOrg;
let child: KeelProcess | undefined;

beforeAll(async () => {
  t = await startTestKeel({ KEEL_ROLES: 'api' });
  org = await t.createOrg();
});
afterAll(async () => {
  if (child) await stopKeelProcess(child.child, 'SIGKILL');
  await t?.stop();
});

function exited(process: KeelProcess): Promise<unknown> {
  const c = process.child;
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve(c.signalCode ?? c.exitCode);
  return new Promise((resolve) => c.once('exit', (code, signal) => resolve(signal ?? code)));
}

const count = async (table: string, where: Record<string, unknown>) => Number((await t.keel.platform.db(table).where(where).count<{ count: string }[]>('* as count'))[0].count);

test('a request killed after its first step committed is retried on a live node within 2 s; the committed step is replayed, the rest runs once', async () => {
  child = await startKeelProcess(t.config, 'api', { RATE_LIMIT_SCALE: '100', KEEL_FAILPOINTS: 'after-commit:webhook.create' });
  const dying = new ApiClient(child.coreUrl!, org.core.credentials);
  const key = randomUUID();
  const document = `mutation {
    hook: createWebhook(input: {url: "https://93.184.216.34/hooks/crash-retry", name: "crash-retry", eventTypes: ["master.*"]}) { id secret }
    key: createApiKey(input: {name: "crash-retry", scopes: ["read"]}) { id secret }
  }`;
  const send = (client: ApiClient) => client.graphql(document, undefined, { 'Idempotency-Key': key });

  await expect(send(dying)).rejects.toThrow();
  expect(await exited(child)).toBe('SIGKILL');
  const diedAt = performance.now();
  expect(await count('webhook_subscriptions', { organizationId: org.orgId, name: 'crash-retry' })).toBe(1);
  expect(await count('api_keys', { organizationId: org.orgId, name: 'crash-retry' })).toBe(0);
  // The claim the dead process left: unanswered, its lock fresh.
  const claim = await t.keel.platform.db('idempotency_keys').where({ key }).first();
  expect(claim.responseStatus).toBeNull();
  expect(claim.holder).not.toBeNull();

  const retry = await send(org.core);
  const answeredInMs = performance.now() - diedAt;
  expect(retry.status).toBe(200);
  expect(retry.body.errors).toBeUndefined();
  expect(answeredInMs).toBeLessThan(RETRY_WITHIN_MS);

  const hooks = await t.keel.platform.db('webhook_subscriptions').where({ organizationId: org.orgId, name: 'crash-retry' });
  expect(hooks).toHaveLength(1);
  expect(retry.body.data.hook.id).toBe(hooks[0].id);
  expect(await count('api_keys', { organizationId: org.orgId, name: 'crash-retry' })).toBe(1);

  const again = await send(org.core);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body).toEqual(retry.body);
}, 120_000);

test('while the process that holds a claim lives, a retry is still 409 (the claim is not taken from a live node)', async () => {
  const key = randomUUID();
  const db = t.keel.platform.db;
  const apiKeyId = (await db('api_keys').where({ organizationId: org.orgId }).first('id')).id;
  // A claim held by a live session of another "node": a connection that holds its own live-process lock.
  const other = await SessionHolder.open(t.config.DATABASE_URL);
  try {
    const body = { name: 'held-elsewhere', scopes: ['read'] };
    const fingerprint = IdempotencyStore.fingerprint({ apiKeyId, key, method: 'POST', path: '/v1/api-keys', body });
    await db('idempotency_keys').insert({ apiKeyId, key, fingerprint, method: 'POST', path: '/v1/api-keys', lockedAt: db.fn.now(), holder: other.id, expiresAt: db.raw(`now() + interval '1 day'`) });
    expect((await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': key })).status).toBe(409);

    // That "node" dies: its session ends, and the retry runs at once.
    await other.close();
    const retry = await org.core.post('/v1/api-keys', body, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(await count('api_keys', { organizationId: org.orgId, name: 'held-elsewhere' })).toBe(1);
  } finally {
    await other.close();
  }
});
