import { randomBytes } from 'node:crypto';
import { Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { startKeel, Keel } from '../../../src/app';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { ApiClient, ApiResponse } from '../../support/api-client';
import { eventually } from '../../support/eventually';

let t: TestKeel;
let org: TestOrg;
/** A second node on the same database and Redis: revocation must reach it at once too. */
let second: Keel;

beforeAll(async () => {
  t = await startTestKeel({ ACCESS_TOKEN_MAX_TTL_SECONDS: 7_200 });
  org = await t.createOrg();
  second = await startKeel({ ...t.config, KEEL_ROLES: 'api' });
});
afterAll(async () => {
  await second?.stop();
  await t?.stop();
});

/** A client that sends only `Authorization: Bearer <token>` (no apiKey, no orgId). */
function bearer(baseUrl: string, token: string) {
  const client = new ApiClient(baseUrl, {});
  const auth = { Authorization: `Bearer ${token}` };
  return {
    get: (path: string, headers: Record<string, string> = {}) => client.get(path, { ...auth, ...headers }),
    post: (path: string, body?: unknown) => client.post(path, body, auth),
    delete: (path: string) => client.delete(path, auth),
    graphql: (query: string, variables?: Record<string, unknown>) => client.graphql(query, variables, auth),
  };
}

async function issue(client: ApiClient, body: Record<string, unknown> = {}, path = '/v1/tokens'): Promise<{ token: string; expiresAt: string; scopes: string[]; expiresIn: number }> {
  const res = await client.post(path, body);
  expect(res.status).toBe(201);
  return res.body.data;
}

async function newCoreKey(scopes: string[]): Promise<{ id: string; client: ApiClient }> {
  const res = await org.core.post('/v1/api-keys', { name: `token-issuer-${scopes.join('-')}`, scopes });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, client: org.core.with({ apiKey: res.body.data.secret, orgId: org.orgId }) };
}

/** A fresh read key's token, sent to this node and to the second one, working on both. */
async function tokenOnBothNodes() {
  const issuer = await newCoreKey(['read']);
  const { token } = await issue(issuer.client);
  const here = bearer(t.coreUrl, token);
  const there = bearer(second.core!.url, token);
  expect((await here.get('/v1/organization')).status).toBe(200);
  expect((await there.get('/v1/organization')).status).toBe(200);
  return { issuer, here, there };
}

function expectError(res: ApiResponse, status: number, code: string, message?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (message) expect(res.body.error.message).toMatch(message);
}

describe('issuing a token', () => {
  test('over REST: narrowed to the scopes asked for, with the lifetime asked for, for the key\'s organisation and host', async () => {
    const before = Date.now();
    const res = await org.core.post('/v1/tokens', { scopes: ['read'], ttlSeconds: 300 });
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(data).toMatchObject({ tokenType: 'Bearer', scopes: ['read'], expiresIn: 300, host: 'core', organizationId: org.orgId, channels: null });
    const expiresAt = new Date(data.expiresAt).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 300_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 300_000);

    const browser = bearer(t.coreUrl, data.token);
    expect((await browser.get('/v1/organization')).body.data.id).toBe(org.orgId);
    // The issuing key is admin; the token is not.
    expectError(await browser.get('/v1/api-keys'), 403, 'FORBIDDEN', /lacks the scope 'admin'/);
    expectError(await browser.post('/v1/webhooks', { url: 'https://example.com/hook', name: 'x', eventTypes: ['*'] }), 403, 'FORBIDDEN', /'write'/);
  });

  test("over GraphQL, by default with every scope of the key and ACCESS_TOKEN_DEFAULT_TTL_SECONDS' lifetime", async () => {
    const res = await org.core.graphql('mutation { createAccessToken { token scopes expiresIn host } }');
    expect(res.body.errors).toBeUndefined();
    const data = res.body.data.createAccessToken;
    // The organisation's first key is an admin key.
    expect(data).toMatchObject({ scopes: ['admin'], expiresIn: 900, host: 'core' });
    const listed = await bearer(t.coreUrl, data.token).graphql('{ apiKeys { total } }');
    expect(listed.body.data.apiKeys.total).toBeGreaterThan(0);
  });

  test('never wider than the key: a read key asking for write is refused with 403 naming it', async () => {
    const reader = await newCoreKey(['read']);
    expectError(await reader.client.post('/v1/tokens', { scopes: ['read', 'write'] }), 403, 'FORBIDDEN', /lacks the scope 'write'; a token cannot be wider/);
    const gql = await reader.client.graphql('mutation { createAccessToken(input: {scopes: ["admin"]}) { token } }');
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect((await issue(reader.client, { scopes: ['read'] })).scopes).toEqual(['read']);
  });

  test('on the order-book host with order-book permissions, narrowed the same way', async () => {
    const data = await issue(org.pro, { scopes: ['orderbook_market:read'] }, '/v1/orderbook/tokens');
    const browser = bearer(t.proUrl, data.token);
    expect((await browser.get('/v1/orderbook/markets')).status).toBe(200);
    expectError(await browser.post('/v1/orderbook/orders', {}), 403, 'FORBIDDEN', /'orderbook_order:create'/);
    expectError(await org.pro.post('/v1/orderbook/tokens', { scopes: ['orderbook_market:manage'] }), 403, 'FORBIDDEN', /orderbook_market:manage/);
  });

  test('refuses unknown scopes, a lifetime over ACCESS_TOKEN_MAX_TTL_SECONDS, and a token issuing tokens', async () => {
    expectError(await org.core.post('/v1/tokens', { scopes: ['superuser'] }), 422, 'INVALID_FIELD', /unknown scope: superuser/);
    expectError(await org.core.post('/v1/tokens', { ttlSeconds: 7_201 }), 422, 'INVALID_FIELD', /ttlSeconds: must be between 1 and 7200/);
    expectError(await org.core.post('/v1/tokens', { ttlSeconds: 0 }), 422, 'INVALID_FIELD', /ttlSeconds/);
    const { token } = await issue(org.core);
    expectError(await bearer(t.coreUrl, token).post('/v1/tokens', {}), 403, 'FORBIDDEN', /cannot issue access tokens/);
  });
});

describe('an Idempotency-Key sent with a token', () => {
  const withKey = (token: string, key: string) => ({ Authorization: `Bearer ${token}`, 'Idempotency-Key': key });

  test("never replays an answer made for a wider credential: a read token cannot replay its key's token issue", async () => {
    const key = `issue-${randomBytes(6).toString('hex')}`;
    const wide = await org.core.post('/v1/tokens', {}, { 'Idempotency-Key': key });
    expect(wide.status).toBe(201);
    const { token: narrow } = await issue(org.core, { scopes: ['read'] });
    const replayed = await new ApiClient(t.coreUrl, {}).post('/v1/tokens', {}, withKey(narrow, key));
    expectError(replayed, 403, 'FORBIDDEN', /cannot issue access tokens/);
    expect(replayed.headers.get('idempotent-replayed')).toBeNull();
  });

  test('is shared by tokens with the same rights: a retry with a refreshed token replays the answer', async () => {
    const key = `wallet-${randomBytes(6).toString('hex')}`;
    const [first, refreshed] = [await issue(org.core, { scopes: ['read', 'write'] }), await issue(org.core, { scopes: ['read', 'write'] })];
    const browser = new ApiClient(t.coreUrl, {});
    const created = await browser.post('/v1/master-wallets', { blockchainId: (await org.core.get('/v1/blockchains')).body.data[0].id, name: 'From the browser' }, withKey(first.token, key));
    expect(created.status).toBe(201);
    const retried = await browser.post('/v1/master-wallets', { blockchainId: (await org.core.get('/v1/blockchains')).body.data[0].id, name: 'From the browser' }, withKey(refreshed.token, key));
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.data.id).toBe(created.body.data.id);
  });
});

describe('authenticating with a token', () => {
  test('an orgId header, when sent, must be the token\'s organisation; an apiKey beside the token is refused', async () => {
    const { token } = await issue(org.core, { scopes: ['read'] });
    const browser = bearer(t.coreUrl, token);
    expect((await browser.get('/v1/organization', { orgId: org.orgId })).status).toBe(200);
    const other = await t.createOrg();
    expectError(await browser.get('/v1/organization', { orgId: other.orgId }), 401, 'INVALID_TOKEN', /another organisation/);
    expectError(await browser.get('/v1/organization', { apiKey: org.adminKey }), 401, 'UNAUTHORIZED', /either an apiKey or a bearer token/);
  });

  test('an expired token is 401 TOKEN_EXPIRED', async () => {
    // Long enough for its first use to land before it expires on a loaded machine.
    const { token, expiresAt } = await issue(org.core, { scopes: ['read'], ttlSeconds: 3 });
    const browser = bearer(t.coreUrl, token);
    expect((await browser.get('/v1/organization')).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, new Date(expiresAt).getTime() - Date.now()) + 50));
    expectError(await browser.get('/v1/organization'), 401, 'TOKEN_EXPIRED');
    const gql = await browser.graphql('{ organization { id } }');
    expect(gql.status).toBe(401);
    expect(gql.body.errors[0].extensions.code).toBe('TOKEN_EXPIRED');
  });

  test('malformed, forged or tampered tokens are 401 INVALID_TOKEN', async () => {
    const { token } = await issue(org.core, { scopes: ['read'] });
    const [header, payload, signature] = token.split('.');
    const claims = decodeJwt(token);
    const { kid } = decodeProtectedHeader(token);

    // Widened to admin, signature kept.
    const widened = Buffer.from(JSON.stringify({ ...claims, scp: ['admin'] })).toString('base64url');
    // Signed like Keel's, with the same key id, but not with Keel's key (another deployment, or a guess).
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid, typ: 'JWT' }).sign(randomBytes(32));
    const unsigned = `${header}.${payload}.`;
    const noneAlg = `${Buffer.from(JSON.stringify({ alg: 'none', kid })).toString('base64url')}.${payload}.`;

    for (const bad of [`${header}.${widened}.${signature}`, forged, unsigned, noneAlg, 'not-a-token', `${token}x`]) {
      expectError(await bearer(t.coreUrl, bad).get('/v1/organization'), 401, 'INVALID_TOKEN');
    }
  });

  test('a token is valid on its own host and environment only', async () => {
    const core = await issue(org.core, { scopes: ['read'] });
    const pro = await issue(org.pro, {}, '/v1/orderbook/tokens');
    expectError(await bearer(t.proUrl, core.token).get('/v1/orderbook/markets'), 401, 'INVALID_TOKEN', /not valid on the pro host/);
    expectError(await bearer(t.coreUrl, pro.token).get('/v1/organization'), 401, 'INVALID_TOKEN', /not valid on the core host/);

    // Signed with this deployment's own key, for production: a sandbox deployment refuses it.
    const live = await t.keel.platform.accessTokens.sign({ organizationId: org.orgId, apiKeyId: decodeJwt(core.token).key as string, keyGeneration: 0, host: 'core', environment: 'production', scopes: ['read'], channels: null }, 60);
    expectError(await bearer(t.coreUrl, live.token).get('/v1/organization'), 401, 'INVALID_TOKEN', /in sandbox/);
  });

  test("revoking the issuing key revokes its tokens at once, on every node", async () => {
    const { issuer, here, there } = await tokenOnBothNodes();

    expect((await org.core.delete(`/v1/api-keys/${issuer.id}`)).status).toBe(200);
    expectError(await here.get('/v1/organization'), 401, 'INVALID_TOKEN', /issued this access token has been revoked/);
    await eventually(async () => (await there.get('/v1/organization')).status === 401, 1_000, 20);
  });

  test('rotating the issuing key ends its tokens at once, on every node; tokens issued after the rotation work', async () => {
    const { issuer, here, there } = await tokenOnBothNodes();

    const rotated = await org.core.post(`/v1/api-keys/${issuer.id}/rotate`, { gracePeriodSeconds: 600 });
    expect(rotated.status).toBe(200);
    expectError(await here.get('/v1/organization'), 401, 'INVALID_TOKEN', /issued this access token has been rotated since/);
    await eventually(async () => (await there.get('/v1/organization')).status === 401, 1_000, 20);

    // The new secret's tokens work; so do those the previous secret issues during its grace period.
    const fresh = await issue(org.core.with({ apiKey: rotated.body.data.secret, orgId: org.orgId }));
    expect((await bearer(second.core!.url, fresh.token).get('/v1/organization')).status).toBe(200);
    const inGrace = await issue(issuer.client);
    expect((await bearer(t.coreUrl, inGrace.token).get('/v1/organization')).status).toBe(200);
    // ...but they end with the grace period, not after it.
    const graceEnds = Date.parse(rotated.body.data.previousSecretExpiresAt);
    expect(Date.parse(inGrace.expiresAt)).toBeLessThanOrEqual(graceEnds);
    expect(inGrace.expiresIn).toBeLessThanOrEqual(600);
    expect((await issue(org.core.with({ apiKey: rotated.body.data.secret, orgId: org.orgId }), { ttlSeconds: 3600 })).expiresIn).toBe(3600);
  });

  test('a token the previous secret issues in a short grace period stops working when the grace period ends', async () => {
    const issuer = await newCoreKey(['read']);
    expect((await org.core.post(`/v1/api-keys/${issuer.id}/rotate`, { gracePeriodSeconds: 2 })).status).toBe(200);
    const inGrace = await issue(issuer.client, { ttlSeconds: 3600 });
    expect(inGrace.expiresIn).toBeLessThanOrEqual(2);
    expect((await bearer(t.coreUrl, inGrace.token).get('/v1/organization')).status).toBe(200);
    await eventually(async () => (await bearer(t.coreUrl, inGrace.token).get('/v1/organization')).status === 401, 5_000, 100);
    expectError(await bearer(t.coreUrl, inGrace.token).get('/v1/organization'), 401, 'TOKEN_EXPIRED');
  });

  test("is rate-limited as the issuing key: its tier's limit, one budget shared with the key", async () => {
    const starter = await t.createOrg({ tier: 'Starter' }); // 5 requests a second
    const keyRes = await starter.core.get('/v1/organization');
    const { token } = await issue(starter.core, { scopes: ['read'] });
    const browser = bearer(t.coreUrl, token);
    const tokenRes = await browser.get('/v1/organization');
    expect(tokenRes.headers.get('x-ratelimit-limit')).toBe(keyRes.headers.get('x-ratelimit-limit'));

    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? browser.get('/v1/organization') : starter.core.get('/v1/organization'))));
    const limited = burst.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) expect(r.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
  });
});

describe('keys are administered with a key, never with a token', () => {
  const REFUSED = /An access token cannot create, rotate or revoke API keys; send the API key itself/;

  test('an admin token is refused (403) creating, rotating or revoking a key over REST, and the keys are unchanged', async () => {
    const target = await newCoreKey(['read']);
    const admin = bearer(t.coreUrl, (await issue(org.core, { scopes: ['admin'] })).token);
    const before = (await org.core.get('/v1/api-keys')).body.total;
    const client = new ApiClient(t.coreUrl, {});
    const auth = { Authorization: `Bearer ${(await issue(org.core, { scopes: ['admin'] })).token}` };

    expectError(await admin.post('/v1/api-keys', { name: 'minted by a token', scopes: ['admin'] }), 403, 'FORBIDDEN', REFUSED);
    expectError(await admin.post(`/v1/api-keys/${target.id}/rotate`, {}), 403, 'FORBIDDEN', REFUSED);
    expectError(await client.delete(`/v1/api-keys/${target.id}`, auth), 403, 'FORBIDDEN', REFUSED);

    // Reading keys is not administering them: an admin token lists them (never their secrets).
    const listed = await admin.get('/v1/api-keys');
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(before);
    expect((await target.client.get('/v1/organization')).status).toBe(200);
    expect((await org.core.get(`/v1/api-keys/${target.id}`)).body.data).toMatchObject({ status: 'ACTIVE', lastRotatedAt: null });
  });

  test('and over GraphQL, before any argument is looked at, agents\' keys included', async () => {
    const target = await newCoreKey(['read']);
    const agent = (await org.core.post('/v1/agents', { name: 'kept' })).body.data;
    const admin = bearer(t.coreUrl, (await issue(org.core, { scopes: ['admin'] })).token);
    for (const document of [
      'mutation { createApiKey(input: {name: "minted", scopes: ["admin"]}) { id secret } }',
      `mutation { rotateApiKey(id: "${target.id}") { id secret } }`,
      `mutation { revokeApiKey(id: "${target.id}") { id } }`,
      'mutation { revokeApiKey(id: "not-an-id") { id } }',
      'mutation { createAgent(input: {name: "minted"}) { id } }',
      // Resuming an agent issues it a new key.
      `mutation { resumeAgent(id: "${agent.id}") { id } }`,
    ]) {
      const res = await admin.graphql(document);
      expect(res.status).toBe(403);
      expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
      expect(res.body.errors[0].message).toMatch(REFUSED);
    }
    expect((await org.core.get(`/v1/api-keys/${target.id}`)).body.data).toMatchObject({ status: 'ACTIVE', lastRotatedAt: null });
    expect((await org.core.get(`/v1/agents/${agent.id}`)).body.data.status).toBe('ACTIVE');
    // The key itself may.
    expect((await org.core.graphql(`mutation { rotateApiKey(id: "${target.id}") { id } }`)).body.errors).toBeUndefined();
  });

  test('suspending or deleting an agent, which only revokes its key, is open to an admin token (a console\'s emergency brake), over REST and GraphQL; not to a write token', async () => {
    const writer = bearer(t.coreUrl, (await issue(org.core, { scopes: ['write'] })).token);
    const admin = bearer(t.coreUrl, (await issue(org.core, { scopes: ['admin'] })).token);
    const created = (await org.core.post('/v1/agents', { name: 'misbehaving' })).body.data;
    const agentKey = new ApiClient(t.coreUrl, { apiKey: created.apiKey, orgId: org.orgId });
    expect((await agentKey.get(`/v1/agents/${created.id}`)).status).toBe(200);

    expectError(await writer.post(`/v1/agents/${created.id}/suspend`), 403, 'FORBIDDEN', /lacks the scope 'admin'/);
    expect((await writer.graphql(`mutation { suspendAgent(id: "${created.id}") { id } }`)).body.errors[0].message).toMatch(/lacks the scope 'admin'/);
    expect((await agentKey.get(`/v1/agents/${created.id}`)).status).toBe(200);

    const suspended = await admin.post(`/v1/agents/${created.id}/suspend`);
    expect(suspended.status).toBe(200);
    expect(suspended.body.data.status).toBe('SUSPENDED');
    expectError(await agentKey.get(`/v1/agents/${created.id}`), 401, 'UNAUTHORIZED');

    const other = (await org.core.post('/v1/agents', { name: 'also misbehaving' })).body.data;
    const suspendedOverGraphql = await admin.graphql(`mutation { suspendAgent(id: "${other.id}") { status } }`);
    expect(suspendedOverGraphql.body).toEqual({ data: { suspendAgent: { status: 'SUSPENDED' } } });
    expect((await admin.delete(`/v1/agents/${created.id}`)).status).toBe(200);
    expect((await admin.graphql(`mutation { deleteAgent(id: "${other.id}") { id } }`)).body.errors).toBeUndefined();
    expectError(await org.core.get(`/v1/agents/${created.id}`), 404, 'NOT_FOUND');
  });

  test('a key without admin is told it lacks admin, as before', async () => {
    const reader = await newCoreKey(['read']);
    expectError(await reader.client.post('/v1/api-keys', { name: 'nope', scopes: ['read'] }), 403, 'FORBIDDEN', /lacks the scope 'admin'/);
  });
});

describe('a token over graphql-ws (connection parameter `token`)', () => {
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.dispose()));
  });

  function connect(baseUrl: string, token: string) {
    const closes: { code: number; reason: string }[] = [];
    let connected = false;
    const client = createClient({
      url: `${baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { token },
      retryAttempts: 0,
      lazyCloseTimeout: 0,
      on: {
        connected: () => (connected = true),
        closed: (event) => {
          const { code, reason } = event as { code: number; reason: unknown };
          closes.push({ code, reason: String(reason) });
        },
      },
    });
    clients.push(client);
    const subscribe = (query: string) => {
      const outcome: { received: any[]; error?: any } = { received: [] };
      client.subscribe({ query }, { next: (v) => outcome.received.push(v), error: (e) => (outcome.error = e), complete: () => undefined });
      return outcome;
    };
    return { closes, subscribe, isConnected: () => connected };
  }

  async function createMasterWallet(name: string): Promise<string> {
    const chains = await org.core.get('/v1/blockchains');
    const res = await org.core.post('/v1/master-wallets', { blockchainId: chains.body.data[0].id, name });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  test("subscribes with the token's scopes and receives the organisation's events", async () => {
    const { token } = await issue(org.core, { scopes: ['read'] });
    const socket = connect(t.coreUrl, token);
    const events = socket.subscribe('subscription { events(types: ["master.created"]) { type data } }');
    await eventually(() => socket.isConnected());
    // Let the subscription reach the server before the event is committed.
    await new Promise((r) => setTimeout(r, 300));
    const walletId = await createMasterWallet(`ws-token-${Date.now()}`);
    await eventually(() => events.received.some((e) => e.data?.events?.data?.id === walletId), 15_000);
    expect(events.error).toBeUndefined();
  });

  test("a subscription the token's scopes do not allow is FORBIDDEN", async () => {
    const writer = await newCoreKey(['write']);
    const { token } = await issue(writer.client);
    const socket = connect(t.coreUrl, token);
    const events = socket.subscribe('subscription { events { id } }');
    await eventually(() => events.error);
    expect(events.error.map((e: any) => e.extensions.code)).toEqual(['FORBIDDEN']);
  });

  test('an expired or invalid token is refused at connection with 4401 and the reason', async () => {
    // Long enough for its first use to land before it expires on a loaded machine.
    const { token, expiresAt } = await issue(org.core, { scopes: ['read'], ttlSeconds: 3 });
    await new Promise((r) => setTimeout(r, Math.max(0, new Date(expiresAt).getTime() - Date.now()) + 50));
    const expired = connect(t.coreUrl, token);
    expired.subscribe('subscription { events { id } }');
    const invalid = connect(t.coreUrl, 'not-a-token');
    invalid.subscribe('subscription { events { id } }');
    await eventually(() => expired.closes.length && invalid.closes.length);
    expect(expired.closes[0]).toEqual({ code: 4401, reason: 'The access token has expired; ask for a new one' });
    expect(invalid.closes[0]).toEqual({ code: 4401, reason: 'Malformed access token' });
  });

  test('an open connection is closed when its token expires', async () => {
    const { token, expiresAt } = await issue(org.core, { scopes: ['read'], ttlSeconds: 2 });
    const socket = connect(t.coreUrl, token);
    socket.subscribe('subscription { events { id } }');
    await eventually(() => socket.isConnected());
    await eventually(() => socket.closes.length, 5_000, 20);
    expect(Date.now()).toBeGreaterThanOrEqual(new Date(expiresAt).getTime());
    expect(socket.closes[0]).toEqual({ code: 4401, reason: 'The access token has expired; ask for a new one' });
  });

  test("revoking the issuing key closes the token's connections on every node", async () => {
    const issuer = await newCoreKey(['read']);
    const { token } = await issue(issuer.client);
    const here = connect(t.coreUrl, token);
    const there = connect(second.core!.url, token);
    here.subscribe('subscription { events { id } }');
    there.subscribe('subscription { events { id } }');
    await eventually(() => here.isConnected() && there.isConnected());

    expect((await org.core.delete(`/v1/api-keys/${issuer.id}`)).status).toBe(200);
    await eventually(() => here.closes.length && there.closes.length, 2_000, 10);
    for (const s of [here, there]) expect(s.closes[0]).toEqual({ code: 4401, reason: 'The API key that issued this access token has been revoked' });
  });
});
