import { createHmac } from 'node:crypto';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { dueDelivery, eventually, WebhookReceiver } from '../../support/webhook-receiver';
import { DeliveryWorker } from '../../../src/modules/webhooks/delivery-worker';
import { SendResult, WebhookSender } from '../../../src/modules/webhooks/webhook-sender';
import { createLogger } from '../../../src/platform/logger';

const SCHEDULE = [0, 100, 200, 300, 400, 500, 600, 700];

let t: TestKeel;
let org: TestOrg;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await startTestKeel({
    WEBHOOKS_ALLOW_PRIVATE_URLS: true,
    WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE,
    WEBHOOK_SWEEP_INTERVAL_MS: 500,
    OUTBOX_POLL_INTERVAL_MS: 20,
  });
  org = await t.createOrg();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
  await t.stop();
});

async function receiver(answer?: ConstructorParameters<typeof WebhookReceiver>[0]) {
  const r = new WebhookReceiver(answer);
  receivers.push(r);
  return { receiver: r, url: await r.start() };
}

async function subscribe(url: string, eventTypes = ['*'], owner = org) {
  const res = await owner.core.post('/v1/webhooks', { url, name: 'test', eventTypes });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string };
}

async function publish(type: string, data: Record<string, unknown> = {}, organizationId = org.orgId) {
  const { db, outbox } = t.keel.platform;
  return db.transaction((trx) => outbox.publish(trx, { organizationId, type, data }));
}

async function deliveryOf(subscriptionId: string, eventId: string, owner = org) {
  const res = await owner.core.get(`/v1/webhook-events?subscriptionId=${subscriptionId}&limit=100`);
  return res.body.data.find((d: any) => d.eventId === eventId);
}

const keelSignature = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');
const standardSignature = (secret: string, id: string, ts: string, body: string) =>
  `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${id}.${ts}.${body}`).digest('base64')}`;

test('a delivery carries the envelope and both signatures, which verify with the secret and not with another', async () => {
  const { receiver: r, url } = await receiver();
  const sub = await subscribe(url);
  const event = await publish('master.created', { id: 'w-1' });
  await eventually(() => r.requests.length === 1);
  const [req] = r.requests;
  expect(JSON.parse(req.body)).toEqual({ id: event.id, type: 'master.created', version: '1.0', timestamp: event.timestamp, environment: 'sandbox', data: { id: 'w-1' } });
  expect(req.headers['x-keel-signature']).toBe(keelSignature(sub.secret, req.body));
  expect(req.headers['x-keel-signature']).not.toBe(keelSignature(`${sub.secret}x`, req.body));
  expect(req.headers['webhook-id']).toBe(event.id);
  const ts = req.headers['webhook-timestamp'] as string;
  expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(30);
  expect(req.headers['webhook-signature']).toBe(standardSignature(sub.secret, event.id, ts, req.body));
  expect(req.headers['webhook-signature']).not.toBe(standardSignature('whsec_' + Buffer.alloc(32).toString('base64'), event.id, ts, req.body));

  const record = await eventually(async () => {
    const d = await deliveryOf(sub.id, event.id);
    return d?.status === 'SUCCESS' && d;
  });
  expect(record).toMatchObject({ type: 'master.created', status: 'SUCCESS', responseStatusCode: 200, retryCount: 0, errorMessage: null, nextAttemptAt: null });
  expect(record.payload.id).toBe(event.id);
  expect((await org.core.get(`/v1/webhook-events/${record.id}`)).body.data.id).toBe(record.id);
});

test('a receiver that always fails gets exactly 8 attempts on the schedule, then FAILED', async () => {
  const { receiver: r, url } = await receiver(() => 500);
  const sub = await subscribe(url);
  const event = await publish('master.updated');
  const record = await eventually(async () => {
    const d = await deliveryOf(sub.id, event.id);
    return d?.attempts === 8 && d.nextAttemptAt === null && d;
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(r.requests).toHaveLength(8);
  expect(new Set(r.eventIds())).toEqual(new Set([event.id]));
  const gaps = r.requests.slice(1).map((req, i) => req.at - r.requests[i].at);
  gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(SCHEDULE[i + 1] - 20));
  expect(record).toMatchObject({ status: 'FAILED', responseStatusCode: 500, retryCount: 7 });
  expect(record.errorMessage).toContain('500');
  const failed = await org.core.get(`/v1/webhook-events?subscriptionId=${sub.id}&status=FAILED`);
  expect(failed.body.data.map((d: any) => d.eventId)).toEqual([event.id]);
});

test('a receiver that fails 3 times then answers 200 ends SUCCESS with retryCount 3', async () => {
  const { receiver: r, url } = await receiver((_req, i) => (i < 3 ? 503 : 200));
  const sub = await subscribe(url);
  const event = await publish('address.created');
  const record = await eventually(async () => {
    const d = await deliveryOf(sub.id, event.id);
    return d?.status === 'SUCCESS' && d;
  });
  expect(record).toMatchObject({ status: 'SUCCESS', retryCount: 3, attempts: 4, responseStatusCode: 200 });
  expect(r.requests).toHaveLength(4);
  expect(new Set(r.requests.map((q) => q.headers['webhook-id']))).toEqual(new Set([event.id]));
});

test('during a rotation both secrets sign; after the overlap only the new one does', async () => {
  const { receiver: r, url } = await receiver();
  const sub = await subscribe(url);
  const rotated = (await org.core.post(`/v1/webhooks/${sub.id}/secret/rotate`, { gracePeriodSeconds: 2 })).body.data;

  await publish('master.created');
  await eventually(() => r.requests.length === 1);
  const during = r.requests[0];
  const signatures = (during.headers['x-keel-signature'] as string).split(' ');
  expect(signatures).toEqual([keelSignature(rotated.secret, during.body), keelSignature(sub.secret, during.body)]);
  expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);

  await new Promise((resolve) => setTimeout(resolve, 2_100));
  await publish('master.created');
  await eventually(() => r.requests.length === 2);
  const after = r.requests[1];
  expect(after.headers['x-keel-signature']).toBe(keelSignature(rotated.secret, after.body));
  expect(after.headers['webhook-signature']).toBe(standardSignature(rotated.secret, after.headers['webhook-id'] as string, after.headers['webhook-timestamp'] as string, after.body));
});

test('a subscription to master.* gets master events only; an upper-case identifier gets what it maps to', async () => {
  const master = await receiver();
  const deposits = await receiver();
  await subscribe(master.url, ['master.*']);
  await subscribe(deposits.url, ['DEPOSITE_INCOMING_DETECTED']);
  for (const type of ['address.created', 'master.created', 'payment_link.created', 'master.incoming_transfer', 'address.incoming_transfer', 'master_settlement_rule.executed']) {
    await publish(type);
  }
  const other = await t.createOrg();
  await publish('master.updated', {}, other.orgId);
  await eventually(() => master.receiver.requests.length === 2 && deposits.receiver.requests.length === 2);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(master.receiver.requests.map((q) => JSON.parse(q.body).type).sort()).toEqual(['master.created', 'master.incoming_transfer']);
  expect(deposits.receiver.requests.map((q) => JSON.parse(q.body).type).sort()).toEqual(['address.incoming_transfer', 'master.incoming_transfer']);
});

test('a subscription receives only events recorded after it was created, however late the relay reads them', async () => {
  const { receiver: r, url } = await receiver();
  await subscribe(url);
  const { db, outbox } = t.keel.platform;
  // Recorded a minute before the subscription existed; committed only now, as if the relay lagged.
  const earlier = await db.transaction(async (trx) => {
    const event = await outbox.publish(trx, { organizationId: org.orgId, type: 'master.created', data: {} });
    await trx('outbox_events').where({ id: event.id }).update({ createdAt: new Date(Date.now() - 60_000) });
    return event;
  });
  const later = await publish('master.updated');
  await eventually(() => r.requests.length >= 1);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(r.requests.map((q) => JSON.parse(q.body).id)).toEqual([later.id]);
  expect(await db('outbox_events').where({ id: earlier.id }).whereNotNull('dispatchedAt').first()).toBeDefined();
});

test('a 410 Gone deactivates the subscription at once, visibly', async () => {
  const { receiver: r, url } = await receiver(() => 410);
  const sub = await subscribe(url);
  await publish('master.created');
  const record = await eventually(async () => {
    const s = (await org.core.get(`/v1/webhooks/${sub.id}`)).body.data;
    return !s.isActive && s;
  });
  expect(record.deactivationReason).toContain('410');
  expect(record.deactivatedAt).toEqual(expect.any(String));
  await publish('master.created');
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(r.requests).toHaveLength(1);
});

test('a subscription failing for longer than the configured stretch is deactivated', async () => {
  const { url } = await receiver(() => 500);
  const sub = await subscribe(url);
  await t.keel.platform.db('webhook_subscriptions').where({ id: sub.id }).update({ failingSince: new Date(Date.now() - 6 * 86_400_000) });
  await publish('master.created');
  const s = await eventually(async () => {
    const body = (await org.core.get(`/v1/webhooks/${sub.id}`)).body.data;
    return !body.isActive && body;
  });
  expect(s.deactivationReason).toContain('failed for more than');
});

test('a delivery taken while its process stops, its connector already closed, is not an attempt: it stays due, uncounted, and is sent later', async () => {
  const { receiver: r, url } = await receiver();
  const sub = await subscribe(url);
  const { db, secretBox, logger } = t.keel.platform;
  const eventId = '00000000-0000-4000-8000-0000000c105e';
  const id = await dueDelivery(db, org.orgId, sub.id, eventId);
  const stopping = new WebhookSender(t.keel.services.webhookGuard, 1_000);
  await stopping.close();
  const worker = new DeliveryWorker(db, stopping, secretBox, t.keel.services.deliveryScheduler, { retryScheduleMs: SCHEDULE, leaseMs: 60_000, deactivateAfterSeconds: 3_600 }, logger);

  await worker.attempt({ deliveryId: id, attempts: 0 });
  expect(await db('webhook_deliveries').where({ id }).first('status', 'attempts', 'leaseUntil', 'errorMessage')).toEqual({ status: 'PENDING', attempts: 0, leaseUntil: null, errorMessage: null });
  expect(await db('webhook_delivery_attempts').where({ deliveryId: id })).toEqual([]);
  expect((await db('webhook_subscriptions').where({ id: sub.id }).first('failingSince')).failingSince).toBeNull();
  // Released, not leased for a minute: the running worker's sweeper sends it at its next pass.
  await eventually(async () => (await deliveryOf(sub.id, eventId))?.status === 'SUCCESS');
  expect(r.eventIds()).toEqual([eventId]);
  expect((await deliveryOf(sub.id, eventId)).retryCount).toBe(0);
});

test("a receiver answering a NUL byte has its failure recorded, and another organisation's delivery in the same batch its success", async () => {
  const other = await t.createOrg();
  const hostile = await receiver(() => ({ status: 500, body: 'bad\0news' }));
  const healthy = await receiver();
  const hostileSub = await subscribe(hostile.url, ['payment_link.*']);
  const healthySub = await subscribe(healthy.url, ['payment_link.*'], other);
  const { db, outbox } = t.keel.platform;
  const [hostileEvent, healthyEvent] = await db.transaction((trx) =>
    outbox.publishMany(trx, [
      { organizationId: org.orgId, type: 'payment_link.created', data: {} },
      { organizationId: other.orgId, type: 'payment_link.created', data: {} },
    ]),
  );
  const failed = await eventually(async () => {
    const d = await deliveryOf(hostileSub.id, hostileEvent.id);
    return d?.attempts === 1 && d;
  });
  expect(failed).toMatchObject({ status: 'FAILED', responseStatusCode: 500, errorMessage: 'receiver answered 500: bad\uFFFDnews' });
  expect(await eventually(() => deliveryOf(healthySub.id, healthyEvent.id, other))).toMatchObject({ status: 'SUCCESS', attempts: 1 });
  expect(healthy.receiver.requests).toHaveLength(1);
});

test('an outcome that cannot be written does not hold back the others recorded with it: it alone fails, logged, and stays due', async () => {
  const other = await t.createOrg();
  const good = await subscribe('http://127.0.0.1:9/good', ['payment_link.*']);
  const bad = await subscribe('http://127.0.0.1:9/bad', ['payment_link.*'], other);
  const { db, secretBox } = t.keel.platform;
  const goodId = await dueDelivery(db, org.orgId, good.id, '00000000-0000-4000-8000-00000000900d');
  const badId = await dueDelivery(db, other.orgId, bad.id, '00000000-0000-4000-8000-000000000bad');
  // Stands in for a sender that let a receiver's NUL through: PostgreSQL text cannot hold it.
  const answers: Record<string, SendResult> = {
    'http://127.0.0.1:9/good': { ok: true, statusCode: 200, errorMessage: null, durationMs: 1 },
    'http://127.0.0.1:9/bad': { ok: false, statusCode: 500, errorMessage: 'bad\0news', durationMs: 1 },
  };
  const sender = { send: async (url: string) => answers[url] } as unknown as WebhookSender;
  const lines: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void lines.push(line) });
  const worker = new DeliveryWorker(db, sender, secretBox, t.keel.services.deliveryScheduler, { retryScheduleMs: SCHEDULE, leaseMs: 60_000, deactivateAfterSeconds: 3_600 }, logger);

  const [goodAttempt, badAttempt] = await Promise.allSettled([worker.attempt({ deliveryId: goodId, attempts: 0 }), worker.attempt({ deliveryId: badId, attempts: 0 })]);
  expect(goodAttempt.status).toBe('fulfilled');
  expect(badAttempt.status).toBe('rejected');
  expect(await db('webhook_deliveries').where({ id: goodId }).first('status', 'attempts')).toEqual({ status: 'SUCCESS', attempts: 1 });
  expect(await db('webhook_deliveries').where({ id: badId }).first('status', 'attempts')).toEqual({ status: 'PENDING', attempts: 0 });
  const logged = lines.map((line) => JSON.parse(line));
  expect(logged).toEqual([expect.objectContaining({ msg: 'webhook delivery outcome not recorded', deliveryId: badId, err: expect.objectContaining({ message: expect.any(String) }) })]);
});

test('resend tries a delivery again now; recover re-sends every failed one since a time', async () => {
  let healthy = false;
  const { receiver: r, url } = await receiver(() => (healthy ? 200 : 500));
  const sub = await subscribe(url);
  const events = [await publish('master.created'), await publish('master.updated')];
  await eventually(async () => {
    const list = (await org.core.get(`/v1/webhook-events?subscriptionId=${sub.id}&status=FAILED`)).body.data;
    return list.length === 2 && list.every((d: any) => d.attempts === 8) && list;
  });
  const failing = r.requests.length;
  healthy = true;
  const first = await deliveryOf(sub.id, events[0].id);
  const resent = await org.core.post(`/v1/webhook-events/${first.id}/resend`);
  expect(resent.status).toBe(200);
  expect(resent.body.data.status).toBe('PENDING');
  await eventually(async () => (await deliveryOf(sub.id, events[0].id)).status === 'SUCCESS');

  const recovered = await org.core.post(`/v1/webhooks/${sub.id}/recover`, { since: new Date(Date.now() - 60_000).toISOString() });
  expect(recovered.body.data).toEqual({ resent: 1 });
  const second = await eventually(async () => {
    const d = await deliveryOf(sub.id, events[1].id);
    return d.status === 'SUCCESS' && d;
  });
  expect(second.retryCount).toBe(8);
  // After the 8 failed attempts of each (delivered at least once: an attempt whose outcome was lost is
  // sent again once its lease ends), the resend and the recovery each sent exactly one request.
  expect(failing).toBeGreaterThanOrEqual(16);
  expect(r.requests.slice(failing).map((q) => events.findIndex((e) => e.id === JSON.parse(q.body).id))).toEqual([0, 1]);
});

test('the live events subscription streams committed events of the organisation, filtered by type', async () => {
  const client = createClient({
    url: `${t.coreUrl.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { apiKey: org.adminKey, orgId: org.orgId },
  });
  const received: any[] = [];
  const done = new Promise<void>((resolve, reject) => {
    client.subscribe(
      { query: 'subscription { events(types: ["master.*"]) { id type version environment data } }' },
      {
        next: (message) => {
          received.push(message.data?.events);
          if (received.length === 2) resolve();
        },
        error: reject,
        complete: () => resolve(),
      },
    );
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const other = await t.createOrg();
  await publish('master.created', {}, other.orgId);
  await publish('address.created', { n: 0 });
  const a = await publish('master.created', { n: 1 });
  const b = await publish('master.updated', { n: 2 });
  await done;
  await client.dispose();
  expect(received).toEqual([
    { id: a.id, type: 'master.created', version: '1.0', environment: 'sandbox', data: { n: 1 } },
    { id: b.id, type: 'master.updated', version: '1.0', environment: 'sandbox', data: { n: 2 } },
  ]);
});

test('the live feed refuses unknown types and a connection without a valid key', async () => {
  const url = `${t.coreUrl.replace('http', 'ws')}/graphql`;
  const subscribeOnce = (connectionParams: Record<string, string>, query: string) =>
    new Promise<unknown>((resolve) => {
      const client = createClient({ url, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazyCloseTimeout: 0 });
      const settle = (value: unknown) => {
        resolve(value);
        void client.dispose();
      };
      client.subscribe({ query }, { next: settle, error: settle, complete: () => undefined });
    });
  const unknown: any = await subscribeOnce({ apiKey: org.adminKey, orgId: org.orgId }, 'subscription { events(types: ["nope"]) { id } }');
  expect(JSON.stringify(unknown)).toContain('INVALID_FIELD');
  const refused: any = await subscribeOnce({ apiKey: 'kc_test_wrong', orgId: org.orgId }, 'subscription { events { id } }');
  expect(refused).toBeDefined();
  expect(JSON.stringify(refused)).not.toContain('"data"');
});
