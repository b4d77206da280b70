import type { ChildProcess } from 'node:child_process';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { startKeelProcess, stopKeelProcess } from '../../support/keel-process';
import { dueDelivery, eventually, WebhookReceiver } from '../../support/webhook-receiver';

const WORKER_ENV = { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_LEASE_MS: '2000', WEBHOOK_SWEEP_INTERVAL_MS: '500', OUTBOX_POLL_INTERVAL_MS: '20', WEBHOOK_CONCURRENCY: '4' };

let t: TestKeel;
let org: TestOrg;
let receiver: WebhookReceiver;
let subscriptionId: string;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  // The API only: deliveries are made by worker processes this file starts and kills.
  t = await startTestKeel({ KEEL_ROLES: 'api', WEBHOOKS_ALLOW_PRIVATE_URLS: true });
  org = await t.createOrg();
  receiver = new WebhookReceiver(() => new Promise((resolve) => setTimeout(() => resolve(200), 100)));
  const url = await receiver.start();
  subscriptionId = (await org.core.post('/v1/webhooks', { url, name: 'crash test', eventTypes: ['*'] })).body.data.id;
});
afterAll(async () => {
  await Promise.all(workers.map((w) => stopKeelProcess(w, 'SIGKILL')));
  await receiver.stop();
  await t.stop();
});

async function worker(): Promise<ChildProcess> {
  const { child } = await startKeelProcess(t.config, 'worker', WORKER_ENV);
  workers.push(child);
  return child;
}

async function publishMany(n: number): Promise<string[]> {
  const { db, outbox } = t.keel.platform;
  return db.transaction(async (trx) => {
    const ids = [];
    for (let i = 0; i < n; i++) ids.push((await outbox.publish(trx, { organizationId: org.orgId, type: 'master.updated', data: { i } })).id);
    return ids;
  });
}

async function allSucceeded(eventIds: string[]): Promise<boolean> {
  const rows = await t.keel.platform.db('webhook_deliveries').where({ subscriptionId }).whereIn('eventId', eventIds).select('status');
  return rows.length === eventIds.length && rows.every((r) => r.status === 'SUCCESS');
}

test('a worker killed with SIGKILL mid-delivery loses nothing: another worker finishes every delivery', async () => {
  const eventIds = await publishMany(40);
  const first = await worker();
  await eventually(() => receiver.requests.length >= 5);
  await stopKeelProcess(first, 'SIGKILL');
  expect(await allSucceeded(eventIds)).toBe(false);

  const second = await worker();
  await eventually(() => allSucceeded(eventIds), 60_000, 200);
  expect(new Set(receiver.eventIds())).toEqual(new Set(eventIds));
  await stopKeelProcess(second);
});

test('a worker stopped with SIGTERM mid-delivery records no failed attempt: what it had not sent stays due, and another worker sends it', async () => {
  receiver.requests.length = 0;
  const eventIds = await publishMany(1_500);
  const first = await worker();
  await eventually(() => receiver.requests.length >= 100);
  await stopKeelProcess(first);
  expect(await allSucceeded(eventIds)).toBe(false);
  const failedAttempts = await t.keel.platform
    .db('webhook_delivery_attempts as a')
    .join('webhook_deliveries as d', 'd.id', 'a.deliveryId')
    .where('d.subscriptionId', subscriptionId)
    .whereIn('d.eventId', eventIds)
    .whereNotNull('a.errorMessage')
    .select('a.errorMessage');
  expect(failedAttempts).toEqual([]);

  const second = await worker();
  await eventually(() => allSucceeded(eventIds), 60_000, 200);
  await stopKeelProcess(second);
});

test('losing every queued job in Redis loses no delivery: PostgreSQL re-queues it', async () => {
  const child = await worker();
  receiver.requests.length = 0;
  const eventIds = await publishMany(40);
  await eventually(() => receiver.requests.length >= 5);
  const redis = t.keel.platform.redis;
  let deleted = 0;
  for await (const keys of redis.scanIterator({ MATCH: `${t.config.REDIS_PREFIX}bull*`, COUNT: 1000 })) {
    if (keys.length) deleted += await redis.del(keys);
  }
  expect(deleted).toBeGreaterThan(0);
  await eventually(() => allSucceeded(eventIds), 60_000, 200);
  expect(new Set(receiver.eventIds())).toEqual(new Set(eventIds));
  await stopKeelProcess(child);
});

test('a delivery committed but never queued (a crash between commit and enqueue) is still sent', async () => {
  const child = await worker();
  receiver.requests.length = 0;
  const { db } = t.keel.platform;
  const eventId = '00000000-0000-4000-8000-00000000c0de';
  await dueDelivery(db, org.orgId, subscriptionId, eventId);
  await eventually(() => allSucceeded([eventId]), 30_000, 200);
  expect(receiver.eventIds()).toEqual([eventId]);
  await stopKeelProcess(child);
});
