import { startTestKeel, TestKeel, TestOrg } from '../support/keel';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { eventually } from '../support/eventually';
import { TcpProxy } from '../support/tcp-proxy';
import { withAdmin } from '../support/databases';
import { adminHeaders, answeredLate, LoadRequest, Sample, steadyLoad, warmUp } from '../support/steady-load';

/** The documented bound: with PostgreSQL unreachable, every request is answered within this. */
const BOUND_MS = 1_000;

let t: TestKeel;
let proxy: TcpProxy;
let keel: KeelProcess;
let orgs: TestOrg[];

beforeAll(async () => {
  t = await startTestKeel({ KEEL_ROLES: 'api' });
  orgs = [await t.createOrg(), await t.createOrg(), await t.createOrg()];
  // The Keel under test reaches PostgreSQL only through this proxy, so the test can cut it off.
  const pg = new URL(t.config.DATABASE_URL);
  proxy = new TcpProxy(Number(pg.port || 5432));
  await proxy.open();
  pg.port = String(proxy.port);
  keel = await startKeelProcess({ ...t.config, DATABASE_URL: pg.toString() }, 'api', { AUTH_CACHE_TTL_MS: '0' });
  await warmUp(requests());
}, 60_000);

afterAll(async () => {
  if (keel) await stopKeelProcess(keel.child, 'SIGKILL');
  await proxy?.close();
  await t?.stop();
});

/** Reads over REST and GraphQL and a write (a new API key), each authenticated from PostgreSQL every time. */
function requests(): LoadRequest[] {
  const base = keel.coreUrl!;
  return [
    { name: 'rest', url: `${base}/v1/api-keys`, init: { headers: adminHeaders(orgs[0]) } },
    { name: 'graphql', url: `${base}/graphql`, init: { method: 'POST', headers: adminHeaders(orgs[1]), body: JSON.stringify({ query: '{ apiKeys(limit: 5) { total } }' }) } },
    { name: 'write', url: `${base}/v1/api-keys`, init: { method: 'POST', headers: adminHeaders(orgs[2]), body: JSON.stringify({ name: 'load', scopes: ['read'] }) } },
  ];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function errorCode(sample: Sample): string | undefined {
  const body = sample.body as { error?: { code: string }; errors?: { extensions: { code: string } }[] };
  return body.error?.code ?? body.errors?.[0]?.extensions.code;
}

const answered503 = (samples: Sample[]) => samples.filter((s) => s.status === 503 && s.name !== 'ready').length;

/**
 * Every answer is a success or 503 SERVICE_UNAVAILABLE in the envelope (GraphQL: in errors[].extensions),
 * within the bound of the fault's start or the request's, whichever came later (a request already
 * slow when the fault began is not the fault's).
 */
function expectOnlySuccessOr503(samples: Sample[], faultAt: number) {
  const other = samples.filter((s) => !(s.status === 200 || s.status === 201 || (s.status === 503 && errorCode(s) === 'SERVICE_UNAVAILABLE')));
  expect(other.map((s) => `${s.name} ${s.status} ${JSON.stringify(s.body)}`)).toEqual([]);
  expect(answeredLate(samples, BOUND_MS, faultAt)).toEqual([]);
}

async function recovered(): Promise<void> {
  await eventually(async () => (await fetch(`${keel.coreUrl}/ready`)).status === 200, 10_000, 100);
  for (const r of requests()) expect((await fetch(r.url, r.init)).status).toBeLessThan(300);
}

test('connections of the test database terminated for 4 s under load: only 2xx or 503 in the envelope, then recovery without a restart', async () => {
  const load = steadyLoad(requests(), 20);
  await sleep(1_000);
  const database = new URL(t.config.DATABASE_URL).pathname.slice(1);
  let terminated = 0;
  const faultAt = load.elapsed();
  await withAdmin(async (admin) => {
    for (const until = Date.now() + 4_000; Date.now() < until; await sleep(100)) {
      const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      terminated += rowCount ?? 0;
    }
  });
  await sleep(1_000);
  const samples = await load.stop();

  expect(terminated).toBeGreaterThan(0);
  expectOnlySuccessOr503(samples, faultAt);
  expect(answered503(samples)).toBeGreaterThan(0);
  await recovered();
}, 60_000);

test('PostgreSQL unreachable for 5 s under load: 503 within the bound, /ready 503, then recovery without a restart', async () => {
  const load = steadyLoad([...requests(), { name: 'ready', url: `${keel.coreUrl}/ready` }], 20);
  await sleep(1_000);
  const faultAt = load.elapsed();
  await proxy.close();
  await sleep(5_000);
  const ready = await fetch(`${keel.coreUrl}/ready`);
  await proxy.open();
  await sleep(1_000);
  const samples = await load.stop();

  expect(ready.status).toBe(503);
  expect(await ready.json()).toMatchObject({ status: 'unavailable', postgres: 'unavailable' });
  expectOnlySuccessOr503(samples.filter((s) => s.name !== 'ready'), faultAt);
  expect(answered503(samples)).toBeGreaterThan(0);
  await recovered();
}, 60_000);
