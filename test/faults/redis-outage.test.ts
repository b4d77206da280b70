import { startTestKeel, TestKeel, TestOrg } from '../support/keel';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';
import { PrivateRedis } from '../support/private-redis';
import { adminHeaders, answeredLate, LoadRequest, Sample, steadyLoad, warmUp } from '../support/steady-load';
import { createClient } from 'redis';

/** The documented bound: with Redis down or paused, every request is answered within this. */
const BOUND_MS = 1_000;
const WORKER_ENV = { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_SWEEP_INTERVAL_MS: '500', OUTBOX_POLL_INTERVAL_MS: '50' };

let t: TestKeel;
let redis: PrivateRedis;
let keel: KeelProcess;
let receiver: WebhookReceiver;
let orgs: TestOrg[];
let resendId: string;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  // In process, on the machine's Redis: only to create organisations and record events.
  t = await startTestKeel({ KEEL_ROLES: 'api', WEBHOOKS_ALLOW_PRIVATE_URLS: true });
  orgs = [await t.createOrg(), await t.createOrg(), await t.createOrg()];
  receiver = new WebhookReceiver();
  const url = await receiver.start();
  await orgs[0].core.post('/v1/webhooks', { url, name: 'outage', eventTypes: ['*'] });
  // The Keel under test: a child process whose only Redis is the private one.
  keel = await startKeelProcess({ ...t.config, REDIS_URL: redis.url }, 'api,worker', WORKER_ENV);
  const [first] = await publishEvents(1);
  await eventually(() => receiver.eventIds().includes(first));
  resendId = (await t.keel.platform.db('webhook_deliveries').where({ eventId: first }).first('id')).id;
  await warmUp(requests());
}, 60_000);

afterAll(async () => {
  if (keel) await stopKeelProcess(keel.child, 'SIGKILL');
  await redis?.kill();
  await receiver?.stop();
  await t?.stop();
});

async function publishEvents(n: number): Promise<string[]> {
  const { db, outbox } = t.keel.platform;
  return db.transaction(async (trx) => {
    const ids = [];
    for (let i = 0; i < n; i++) ids.push((await outbox.publish(trx, { organizationId: orgs[0].orgId, type: 'master.updated', data: { i } })).id);
    return ids;
  });
}

/** Authenticated REST and GraphQL reads of three organisations, a webhook resend (a queue add) and /ready. */
function requests(): LoadRequest[] {
  const base = keel.coreUrl!;
  return [
    ...orgs.map((org) => ({ name: 'rest', url: `${base}/v1/api-keys`, init: { headers: adminHeaders(org) } })),
    { name: 'graphql', url: `${base}/graphql`, init: { method: 'POST', headers: adminHeaders(orgs[1]), body: JSON.stringify({ query: '{ organization { id } }' }) } },
    { name: 'resend', url: `${base}/v1/webhook-events/${resendId}/resend`, init: { method: 'POST', headers: adminHeaders(orgs[0]), body: '{}' } },
    { name: 'ready', url: `${base}/ready` },
  ];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectAnsweredWithinBound(samples: Sample[], faultAt: number, statuses = [200]) {
  expect(answeredLate(samples, BOUND_MS, faultAt)).toEqual([]);
  const failed = samples.filter((s) => s.name !== 'ready' && !statuses.includes(s.status));
  expect(failed.map((s) => `${s.name} ${s.status} ${JSON.stringify(s.body)}`)).toEqual([]);
}

async function readyAgain() {
  // A child that died says why (its last log lines), rather than a bare connection refused.
  if (keel.child.exitCode !== null || keel.child.signalCode !== null) {
    throw new Error(`the Keel process exited (${keel.child.exitCode ?? keel.child.signalCode}):\n${keel.output().slice(-8000)}`);
  }
  await eventually(async () => (await fetch(`${keel.coreUrl}/ready`)).status === 200, 15_000, 100);
}

test('Redis killed for 10 s under load: every request answered within 1 s, /ready says 503, every webhook event delivered once it returns', async () => {
  const load = steadyLoad(requests(), 40);
  await sleep(1_000);
  const faultAt = load.elapsed();
  await redis.kill();
  const during: string[] = [];
  for (let i = 0; i < 20; i++) {
    during.push(...(await publishEvents(1)));
    await sleep(500);
  }
  const readyDuring = load.samples.filter((s) => s.name === 'ready').slice(-5);
  await redis.restart();
  await readyAgain();
  await sleep(1_000);
  const samples = await load.stop();

  expect(readyDuring.map((s) => [s.status, (s.body as { redis: string }).redis])).toEqual(Array(5).fill([503, 'unavailable']));
  expectAnsweredWithinBound(samples, faultAt);
  await eventually(() => during.every((id) => receiver.eventIds().includes(id)), 30_000, 200);

  // Both node-redis subscribers of the child are back on the new server: revocations reach it again.
  const probe = createClient({ url: redis.url });
  await probe.connect();
  await eventually(async () => (await probe.pubSubChannels()).includes(`${t.config.REDIS_PREFIX}auth:invalidate`), 10_000, 100);
  await probe.quit();
}, 60_000);

test('Redis paused (SIGSTOP) for 5 s under load: every request answered within 1 s, and it recovers when resumed', async () => {
  const load = steadyLoad(requests(), 40);
  await sleep(1_000);
  const faultAt = load.elapsed();
  redis.pause();
  const during: string[] = [];
  for (let i = 0; i < 10; i++) {
    during.push(...(await publishEvents(1)));
    await sleep(500);
  }
  redis.resume();
  await readyAgain();
  await sleep(1_000);
  const samples = await load.stop();

  // A paused Redis still runs the increments it was sent, on resuming, into the current window:
  // a key may see 429 RATE_LIMIT_EXCEEDED (in the envelope) until that second ends.
  expectAnsweredWithinBound(samples, faultAt, [200, 429]);
  await eventually(() => during.every((id) => receiver.eventIds().includes(id)), 30_000, 200);
});

test('SIGTERM while Redis is down: the node stops at once, having closed everything (exit 0, not the shutdown timeout)', async () => {
  await redis.kill();
  await sleep(500);
  const exited = new Promise<number | null>((resolve) => keel.child.once('exit', resolve));
  const signalledAt = Date.now();
  keel.child.kill('SIGTERM');
  const code = await exited;
  expect({ code, stopped: keel.output().includes('"msg":"stopped"') }).toEqual({ code: 0, stopped: true });
  expect(Date.now() - signalledAt).toBeLessThan(3_000);
});
