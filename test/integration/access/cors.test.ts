import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startKeel, Keel } from '../../../src/app';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';

const DASHBOARD = 'http://dashboard.test:3000';
const OTHER_SITE = 'https://evil.test';

let t: TestKeel;
let org: TestOrg;
/** A node of the same deployment left at the default: CORS_ORIGINS unset. */
let closed: Keel;

beforeAll(async () => {
  t = await startTestKeel({ CORS_ORIGINS: [DASHBOARD, 'https://ops.example.com'] });
  org = await t.createOrg();
  closed = await startKeel({ ...t.config, CORS_ORIGINS: [], KEEL_ROLES: 'api' });
});
afterAll(async () => {
  await closed?.stop();
  await t?.stop();
});

function preflight(url: string, origin: string, method = 'POST', headers = 'apikey, orgid, content-type, idempotency-key, x-request-id') {
  return fetch(url, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers } });
}

function corsHeaders(res: Response): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')));
}

const commaList = (value: string | null) => (value ?? '').split(',').map((s) => s.trim().toLowerCase());

describe('a preflight', () => {
  test.each([
    ['core', '/v1/master-wallets'],
    ['core', '/graphql'],
    ['pro', '/v1/orderbook/orders'],
    ['pro', '/graphql'],
  ])('from an allowed origin is answered on the %s host (%s) with the methods and every header Keel reads', async (host, path) => {
    const res = await preflight(`${host === 'core' ? t.coreUrl : t.proUrl}${path}`, DASHBOARD);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(commaList(res.headers.get('access-control-allow-methods'))).toEqual(expect.arrayContaining(['get', 'post', 'put', 'patch', 'delete']));
    expect(commaList(res.headers.get('access-control-allow-headers'))).toEqual(
      expect.arrayContaining(['apikey', 'orgid', 'appid', 'authorization', 'idempotency-key', 'x-request-id', 'content-type']),
    );
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toMatch(/Origin/);
  });

  test.each([
    ['an origin not on the list', () => `${t.coreUrl}/v1/master-wallets`, OTHER_SITE],
    ['the same host on another port', () => `${t.coreUrl}/v1/master-wallets`, 'http://dashboard.test:3001'],
    ['the order-book host, from an origin not on the list', () => `${t.proUrl}/v1/orderbook/orders`, OTHER_SITE],
    ['a deployment without CORS_ORIGINS, from any origin', () => `${closed.core!.url}/v1/master-wallets`, DASHBOARD],
  ])('from %s gets no CORS header at all', async (_what, url, origin) => {
    const res = await preflight(url(), origin);
    expect(corsHeaders(res)).toEqual({});
  });
});

describe('a request from a page', () => {
  test('of an allowed origin can read the answer and the headers a client needs, errors included', async () => {
    const ok = await fetch(`${t.coreUrl}/v1/organization`, { headers: { Origin: DASHBOARD, apiKey: org.adminKey, orgId: org.orgId } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(commaList(ok.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-quota-limit', 'x-quota-remaining', 'x-quota-reset', 'idempotent-replayed', 'retry-after']),
    );

    const unauthorized = await fetch(`${t.proUrl}/v1/orderbook/markets`, { headers: { Origin: 'https://ops.example.com', apiKey: 'nope', orgId: org.orgId } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe('https://ops.example.com');
  });

  test.each([
    ['a URL over the length Keel reads', () => `/v1/master-wallets?x=${'a'.repeat(9_000)}`, 414],
    ['a URL Fastify cannot decode', () => '/v1/master-wallets/%E0%A4%A', 400],
    ['a path segment over the length Keel reads', () => `/v1/checkout/links/${'a'.repeat(200)}`, 400],
  ])('of an allowed origin can read the refusal of %s, answered before anything reads the request', async (_what, path, status) => {
    const res = await fetch(`${t.coreUrl}${path()}`, { headers: { Origin: DASHBOARD } });
    expect(res.status).toBe(status);
    expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(commaList(res.headers.get('access-control-expose-headers'))).toContain('x-request-id');
    expect(res.headers.get('vary')).toMatch(/Origin/);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('BAD_REQUEST');
    const other = await fetch(`${t.coreUrl}${path()}`, { headers: { Origin: OTHER_SITE } });
    expect(other.status).toBe(status);
    expect(corsHeaders(other)).toEqual({});
  });

  test('exposes exactly the headers docs/browser-access.md lists', async () => {
    const guide = readFileSync(join(__dirname, '../../../docs/browser-access.md'), 'utf8');
    const listed = /`Access-Control-Expose-Headers: ([^`]+)`/.exec(guide)?.[1].replace(/\s+/g, ' ');
    const res = await fetch(`${t.coreUrl}/v1/organization`, { headers: { Origin: DASHBOARD, apiKey: org.adminKey, orgId: org.orgId } });
    expect(commaList(listed ?? null).sort()).toEqual(commaList(res.headers.get('access-control-expose-headers')).sort());
  });

  test('to /graphql, POST or a GET by URL, carries the same headers', async () => {
    const headers = { Origin: DASHBOARD, apiKey: org.adminKey, orgId: org.orgId };
    const post = await fetch(`${t.proUrl}/graphql`, { method: 'POST', headers: { ...headers, apiKey: org.proKey!, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ engineStatus { status } }' }) });
    const get = await fetch(`${t.coreUrl}/graphql?${new URLSearchParams({ query: '{ organization { id } }' })}`, { headers });
    for (const res of [post, get]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
      expect(res.headers.get('vary')).toMatch(/Origin/);
    }
    expect(((await get.json()) as { data: { organization: { id: string } } }).data.organization.id).toBe(org.orgId);
  });

  test('of another origin, or with no Origin (not a browser), gets no CORS header', async () => {
    for (const headers of [{ Origin: OTHER_SITE }, {}] as Record<string, string>[]) {
      const res = await fetch(`${t.coreUrl}/v1/organization`, { headers: { ...headers, apiKey: org.adminKey, orgId: org.orgId } });
      expect(res.status).toBe(200);
      expect(corsHeaders(res)).toEqual({});
    }
  });
});

describe('a graphql-ws upgrade', () => {
  /** Opens a raw websocket as a browser page of `origin` would (no Origin: a server-side client). */
  function upgrade(baseUrl: string, origin?: string): Promise<{ opened: boolean; status?: number }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', origin ? { origin } : {});
      ws.on('open', () => {
        ws.close();
        resolve({ opened: true });
      });
      ws.on('unexpected-response', (_req, res) => {
        resolve({ opened: false, status: res.statusCode });
        res.resume();
      });
      ws.on('error', (error) => {
        if (!/Unexpected server response/.test(String(error))) reject(error);
      });
    });
  }

  test('from a disallowed origin is refused with 403, on both hosts and where no origin is allowed', async () => {
    expect(await upgrade(t.coreUrl, OTHER_SITE)).toEqual({ opened: false, status: 403 });
    expect(await upgrade(t.proUrl, OTHER_SITE)).toEqual({ opened: false, status: 403 });
    expect(await upgrade(closed.core!.url, DASHBOARD)).toEqual({ opened: false, status: 403 });
  });

  test('from an allowed origin, or without an Origin, opens', async () => {
    expect(await upgrade(t.coreUrl, DASHBOARD)).toEqual({ opened: true });
    expect(await upgrade(t.proUrl, DASHBOARD)).toEqual({ opened: true });
    expect(await upgrade(closed.core!.url)).toEqual({ opened: true });
  });

  test("from a page of the host itself (the built-in console) opens, whatever the allow-list; another port of the same machine is another origin", async () => {
    expect(await upgrade(closed.core!.url, closed.core!.url)).toEqual({ opened: true });
    expect(await upgrade(t.proUrl, t.proUrl)).toEqual({ opened: true });
    expect(await upgrade(closed.core!.url, t.coreUrl)).toEqual({ opened: false, status: 403 });
  });
});
