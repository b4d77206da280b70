import { Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startKeel, Keel } from '../../../src/app';
import { useTestKeel } from '../../support/use-test-keel';
import { eventually } from '../../support/eventually';
import type { TestOrg } from '../../support/keel';

// Low connection caps, so that reaching them takes a few sockets (no other test here holds as many).
const { t, orgs: [org] } = useTestKeel({ WS_MAX_CONNECTIONS_PER_KEY: 3, WS_MAX_CONNECTIONS_PER_ORGANIZATION: 5 }, { orgs: 1 });

interface Socket {
  client: Client;
  /** Close frames the client saw: graphql-ws reports them to every open operation too. */
  closes: { code: number; reason: string }[];
  connected: Promise<void>;
  subscribe(query: string): { received: unknown[]; error?: unknown };
}

const sockets: Socket[] = [];
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.client.dispose()));
});

type Credentials = { apiKey: string; orgId: string } | { token: string };

/** A graphql-ws client; `eager` connects at once instead of on its first subscribe. */
function openSocket(baseUrl: string, credentials: Credentials, { eager = false } = {}): Socket {
  const closes: Socket['closes'] = [];
  let onConnected!: () => void;
  const connected = new Promise<void>((resolve) => (onConnected = resolve));
  const client = createClient({
    url: `${baseUrl.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: credentials,
    retryAttempts: 0,
    lazyCloseTimeout: 0,
    lazy: !eager,
    onNonLazyError: () => undefined,
    on: {
      connected: () => onConnected(),
      closed: (event) => {
        const { code, reason } = event as { code: number; reason: unknown };
        closes.push({ code, reason: String(reason) });
      },
    },
  });
  const socket: Socket = {
    client,
    closes,
    connected,
    subscribe(query) {
      const outcome: { received: unknown[]; error?: unknown } = { received: [] };
      client.subscribe({ query }, { next: (v) => outcome.received.push(v), error: (e) => (outcome.error = e), complete: () => undefined });
      return outcome;
    },
  };
  sockets.push(socket);
  return socket;
}

const EVENTS = 'subscription { events { id type } }';

async function newKey(scopes = ['read'], owner: TestOrg = org): Promise<{ id: string; secret: string }> {
  const res = await owner.core.post('/v1/api-keys', { name: `ws-${Date.now()}`, scopes });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, secret: res.body.data.secret };
}

function errorCodes(error: unknown): string[] {
  return Array.isArray(error) ? error.map((e) => e.extensions?.code) : [];
}

describe('a revoked key', () => {
  let second: Keel;
  beforeAll(async () => {
    second = await startKeel({ ...t.config, KEEL_ROLES: 'api' });
  });
  afterAll(() => second.stop());

  test('has its open subscriptions closed within a second, on every node sharing the database and Redis', async () => {
    const key = await newKey();
    const here = openSocket(t.coreUrl, { apiKey: key.secret, orgId: org.orgId });
    const there = openSocket(second.core!.url, { apiKey: key.secret, orgId: org.orgId });
    const subscriptions = [here.subscribe(EVENTS), there.subscribe(EVENTS)];
    await Promise.all([here.connected, there.connected]);

    const revokedAt = Date.now();
    expect((await org.core.delete(`/v1/api-keys/${key.id}`)).status).toBe(200);
    await eventually(() => here.closes.length > 0 && there.closes.length > 0, 5_000, 10);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    for (const socket of [here, there]) expect(socket.closes).toEqual([{ code: 4401, reason: 'This API key has been revoked' }]);
    for (const s of subscriptions) expect(s.error).toMatchObject({ code: 4401 });
  });

  test('whose invalidation never reached the node (lost with Redis) is still closed once the node re-checks it', async () => {
    const key = await newKey(['read', 'write', 'admin']);
    const socket = openSocket(t.coreUrl, { apiKey: key.secret, orgId: org.orgId });
    socket.subscribe(EVENTS);
    await socket.connected;
    // Revoked behind the authenticator's back: no broadcast, so only the periodic re-check can notice.
    await t.keel.platform.db('api_keys').where({ id: key.id }).update({ revokedAt: new Date() });

    await eventually(() => socket.closes.length > 0, 2 * t.config.AUTH_CACHE_TTL_MS + 2_000);
    expect(socket.closes[0]).toEqual({ code: 4401, reason: 'This API key has been revoked' });
  });
});

describe('a rotated key', () => {
  test("closes the old secret's sockets when its grace period ends, and keeps the new secret's", async () => {
    const key = await newKey();
    const old = openSocket(t.coreUrl, { apiKey: key.secret, orgId: org.orgId });
    old.subscribe(EVENTS);
    await old.connected;

    const rotated = await org.core.post(`/v1/api-keys/${key.id}/rotate`, { gracePeriodSeconds: 2 });
    expect(rotated.status).toBe(200);
    const expiresAt = new Date(rotated.body.data.previousSecretExpiresAt).getTime();
    const current = openSocket(t.coreUrl, { apiKey: rotated.body.data.secret, orgId: org.orgId });
    current.subscribe(EVENTS);
    await current.connected;

    await new Promise((r) => setTimeout(r, 1_000));
    expect(old.closes).toEqual([]);
    await eventually(() => old.closes.length > 0, 5_000, 10);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(old.closes[0]).toEqual({ code: 4401, reason: 'This API key was rotated and its grace period has ended' });
    expect(current.closes).toEqual([]);
  });
});

describe('operations over a socket', () => {
  test('run subscriptions only: a mutation or a query gets BAD_REQUEST and does nothing', async () => {
    const before = await org.core.get('/v1/api-keys');
    const socket = openSocket(t.coreUrl, { apiKey: org.adminKey, orgId: org.orgId });
    const mutation = socket.subscribe('mutation { createApiKey(input: {name: "over-ws", scopes: ["read"]}) { id secret } }');
    const query = socket.subscribe('{ apiKeys { total } }');
    await eventually(() => mutation.error && query.error);

    expect(errorCodes(mutation.error)).toEqual(['BAD_REQUEST']);
    expect(JSON.stringify(mutation.error)).toMatch(/Only subscriptions run over graphql-ws; send mutations to POST \/graphql/);
    expect(errorCodes(query.error)).toEqual(['BAD_REQUEST']);
    expect(mutation.received).toEqual([]);
    expect((await org.core.get('/v1/api-keys')).body.total).toBe(before.body.total);
  });

  test("spend the key's rate limit, shared with its HTTP requests, and are refused with RATE_LIMIT_EXCEEDED when over", async () => {
    const starter = await t.createOrg({ tier: 'Starter' }); // 5 requests a second
    const socket = openSocket(t.coreUrl, { apiKey: starter.adminKey, orgId: starter.orgId });
    const burst = Array.from({ length: 8 }, () => socket.subscribe(EVENTS));
    await eventually(() => burst.filter((s) => s.error).length >= 3);
    const http = await starter.core.get('/v1/api-keys');

    const refused = burst.filter((s) => s.error);
    for (const s of refused) {
      expect(errorCodes(s.error)).toEqual(['RATE_LIMIT_EXCEEDED']);
      expect((s.error as { extensions: { details: unknown } }[])[0].extensions.details).toMatchObject({ limit: 5, remaining: 0 });
    }
    expect(http.status).toBe(429);
    expect(socket.closes).toEqual([]);
  });
});

/** Opens an eager connection and waits for its acknowledgement or its close. */
async function connect(credentials: Credentials): Promise<Socket> {
  const socket = openSocket(t.coreUrl, credentials, { eager: true });
  let acknowledged = false;
  void socket.connected.then(() => (acknowledged = true));
  await eventually(() => acknowledged || socket.closes.length > 0, 5_000, 10);
  return socket;
}

describe('opening a connection', () => {
  // This file's Keel: WS_MAX_CONNECTIONS_PER_KEY 3, WS_MAX_CONNECTIONS_PER_ORGANIZATION 5.
  test("a key holds at most WS_MAX_CONNECTIONS_PER_KEY open, its tokens' counted under it: the next is closed 4429 with the reason", async () => {
    const key = await newKey();
    const asKey = { apiKey: key.secret, orgId: org.orgId };
    const issued = await org.core.with(asKey).post('/v1/tokens', { ttlSeconds: 300 });
    expect(issued.status).toBe(201);
    const token = { token: issued.body.data.token as string };

    const open = [await connect(asKey), await connect(asKey), await connect(token)];
    for (const socket of open) expect(socket.closes).toEqual([]);
    const refusal = { code: 4429, reason: 'Too many connections: this API key holds 3 open on this node; close one first' };
    for (const credentials of [asKey, token]) expect((await connect(credentials)).closes).toEqual([refusal]);
    expect(open.flatMap((s) => s.closes)).toEqual([]);

    // Another key of the organisation is not held up by this one.
    expect((await connect({ apiKey: org.adminKey, orgId: org.orgId })).closes).toEqual([]);
    // Once one of the key's connections closes, the key may open another.
    await open[0].client.dispose();
    await eventually(async () => (await connect(asKey)).closes.length === 0, 5_000);
  });

  test('a connection closed by its client while its key is checked gives its place in the caps back', async () => {
    const key = await newKey();
    const asKey = { apiKey: key.secret, orgId: org.orgId };
    // More than the key's cap of connections, each sending connection_init and leaving at once.
    for (let i = 0; i < 6; i++) {
      const raw = new WebSocket(`${t.coreUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
      await new Promise((resolve) => raw.once('open', resolve));
      raw.send(JSON.stringify({ type: 'connection_init', payload: asKey }));
      raw.terminate();
    }
    await new Promise((r) => setTimeout(r, 500));
    const open = [await connect(asKey), await connect(asKey), await connect(asKey)];
    expect(open.flatMap((s) => s.closes)).toEqual([]);
  });

  test('an organisation holds at most WS_MAX_CONNECTIONS_PER_ORGANIZATION open, all its keys together', async () => {
    const other = await t.createOrg();
    const keys = [other.adminKey, (await newKey(['read'], other)).secret, (await newKey(['read'], other)).secret];
    const as = (apiKey: string) => ({ apiKey, orgId: other.orgId });
    const open = await Promise.all([keys[0], keys[0], keys[0], keys[1], keys[1]].map((k) => connect(as(k))));
    expect(open.flatMap((s) => s.closes)).toEqual([]);

    expect((await connect(as(keys[2]))).closes).toEqual([{ code: 4429, reason: 'Too many connections: this organisation holds 5 open on this node; close one first' }]);
    // Not another organisation's.
    expect((await connect({ apiKey: org.adminKey, orgId: org.orgId })).closes).toEqual([]);
  });

  test("spends a request of the key's rate limit, shared with HTTP: over it, the connection is closed 4429 with when to retry", async () => {
    const starter = await t.createOrg({ tier: 'Starter' }); // 5 requests a second
    const asStarter = { apiKey: starter.adminKey, orgId: starter.orgId };
    expect((await connect(asStarter)).closes).toEqual([]);
    // The connection took one of the second's five: four more fit, over HTTP.
    const statuses = await Promise.all(Array.from({ length: 4 }, async () => (await starter.core.get('/v1/api-keys')).status));
    expect(statuses).toEqual([200, 200, 200, 200]);

    const refused = await connect(asStarter);
    expect(refused.closes).toHaveLength(1);
    expect(refused.closes[0].code).toBe(4429);
    expect(refused.closes[0].reason).toMatch(/^Rate limit exceeded; retry after the reset time \(in \d+ s\)$/);
  });
});
