import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { useTestKeel } from '../../support/use-test-keel';
import { ApiClient, ApiResponse } from '../../support/api-client';
import { eventually } from '../../support/eventually';
import { parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { RealtimeClient } from '../../support/realtime-client';

const SYMBOL = 'RTA-USDC';

const { t, orgs: [org] } = useTestKeel({}, { orgs: 1 });
beforeAll(async () => {
  // One market, so market channels have something to name.
  const chainId = parseChainsConfig(process.env.KEEL_CHAINS!)[0].chainId;
  const chain = (await t.keel.services.chains.listBlockchains({ limit: 100, offset: 0 })).items.find((b) => b.chainId === chainId)!;
  const assets = (await t.keel.services.chains.listAssets({ limit: 100, offset: 0, blockchainId: chain.id })).items;
  const [base, quote] = [assets.find((a) => a.symbol === 'ETH')!, assets.find((a) => a.symbol === 'USDC')!];
  const market = await (await t.operator()).post('/v1/orderbook/markets', { symbol: SYMBOL, baseAssetId: base.id, quoteAssetId: quote.id, tickSize: '0.01', lotSize: '0.001' });
  expect(market.status).toBe(201);
});

const AUTH = '/v1/orderbook/realtime/auth';

function expectError(res: ApiResponse, status: number, code: string, message?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (message) expect(res.body.error.message).toMatch(message);
}

test('issues a token narrowed to the channels asked for: the principal it authenticates as may use those alone', async () => {
  const res = await org.pro.post(AUTH, { channels: [`book:${SYMBOL}`, `trades:${SYMBOL.toLowerCase()}`, 'orders'], ttlSeconds: 120 });
  expect(res.status).toBe(201);
  const data = res.body.data;
  expect(data).toMatchObject({
    tokenType: 'Bearer',
    host: 'pro',
    organizationId: org.orgId,
    expiresIn: 120,
    channels: [`book:${SYMBOL}`, `trades:${SYMBOL}`, 'orders'],
    scopes: ['orderbook_market:read', 'orderbook_order:read'],
  });

  const claims = await t.keel.platform.accessTokens.verify(data.token, 'pro', 'sandbox');
  expect(claims).toMatchObject({ organizationId: org.orgId, channels: data.channels, scopes: data.scopes });
  expect(claims.expiresAt.toISOString()).toBe(data.expiresAt);

  const principal = await t.keel.platform.authenticator.authenticate('pro', { token: data.token });
  expect(principal.organizationId).toBe(org.orgId);
  expect(principal.mayUseChannel(`book:${SYMBOL}`)).toBe(true);
  expect(principal.mayUseChannel('orders')).toBe(true);
  expect(principal.mayUseChannel(`ticker:${SYMBOL}`)).toBe(false);
  expect(principal.mayUseChannel('fills')).toBe(false);
  // Realtime is for reading: the token cannot place orders although the key can.
  expect(principal.can('orderbook_order:create')).toBe(false);
});

test('without channels the token may use every channel its permissions allow; GraphQL issues the same', async () => {
  const res = await org.pro.graphql('mutation { authorizeRealtime(input: {permissions: ["orderbook_market:read"]}) { token channels scopes } }');
  expect(res.body.errors).toBeUndefined();
  const { token, channels, scopes } = res.body.data.authorizeRealtime;
  expect({ channels, scopes }).toEqual({ channels: null, scopes: ['orderbook_market:read'] });
  const principal = await t.keel.platform.authenticator.authenticate('pro', { token });
  expect(principal.mayUseChannel(`candles:${SYMBOL}`)).toBe(true);
  expect(principal.channels).toBeNull();
});

test("a token narrowed to public channels carries no private read permission: it reads no one's orders, fills or balances", async () => {
  const res = await org.pro.post(AUTH, { channels: [`book:${SYMBOL}`, `trades:${SYMBOL}`] });
  expect(res.status).toBe(201);
  expect(res.body.data.scopes).toEqual(['orderbook_market:read']);
  const principal = await t.keel.platform.authenticator.authenticate('pro', { token: res.body.data.token });
  expect(principal.can('orderbook_order:read')).toBe(false);
  expect(principal.mayUseChannel('orders')).toBe(false);

  const browser = new ApiClient(t.proUrl, {});
  const auth = { Authorization: `Bearer ${res.body.data.token}` };
  expect((await browser.get('/v1/orderbook/markets', auth)).status).toBe(200);
  expectError(await browser.get('/v1/orderbook/orders', auth), 403, 'FORBIDDEN', /lacks the permission 'orderbook_order:read'/);

  // Asked for, the private reading permission is carried (the key holds it).
  const asked = await org.pro.post(AUTH, { channels: [`trades:${SYMBOL}`], permissions: ['orderbook_market:read', 'orderbook_order:read'] });
  expect(asked.body.data.scopes).toEqual(['orderbook_market:read', 'orderbook_order:read']);
  // Narrowed to a private channel alone, the token carries only its permission.
  const ordersOnly = await t.keel.services.apiKeys.issue({ organizationId: org.orgId, name: 'orders reader', host: 'pro', scopes: ['orderbook_order:read', 'orderbook_market:read'], tier: 'Business' });
  const narrowed = await org.pro.with({ apiKey: ordersOnly.secret, orgId: org.orgId }).post(AUTH, { channels: ['orders'] });
  expect(narrowed.body.data.scopes).toEqual(['orderbook_order:read']);
});

test("every subscription is under a channel: a token narrowed to others cannot follow settlement batches; one narrowed to `settlement` can", async () => {
  const updates = 'subscription { settlementBatchUpdates { batchId status } }';
  const ordersOnly = await org.pro.post(AUTH, { channels: ['orders'], permissions: ['orderbook_order:read', 'orderbook_settlement:read'] });
  expect(ordersOnly.status).toBe(201);
  const settlement = await org.pro.post(AUTH, { channels: ['settlement'] });
  expect(settlement.status).toBe(201);
  expect(settlement.body.data).toMatchObject({ channels: ['settlement'], scopes: ['orderbook_settlement:read'] });

  const refusedClient = new RealtimeClient(t.proUrl, { token: ordersOnly.body.data.token });
  const allowedClient = new RealtimeClient(t.proUrl, { token: settlement.body.data.token });
  try {
    const refused = refusedClient.subscribe(updates);
    await eventually(() => refused.errors, 5_000);
    expect(refused.errors![0]).toMatchObject({ message: "This credential is not authorised for channel 'settlement'", extensions: { code: 'FORBIDDEN' } });

    const allowed = allowedClient.subscribe(updates);
    const batchId = '00000000-0000-4000-8000-000000000001';
    const envelope = { id: 'evt', type: 'settlement_batch.confirmed', version: '1', timestamp: new Date().toISOString(), environment: 'sandbox', data: { batchId, status: 'CONFIRMED', previousStatus: 'SUBMITTED', blockchainId: batchId, tradeCount: 1, txHash: null, blockNumber: null, reason: null } };
    // Published until the subscription has reached Redis and hears it.
    await eventually(() => {
      t.keel.services.liveFeed.publish([{ organizationId: org.orgId, envelope }]);
      return allowed.messages.length > 0 || allowed.errors;
    }, 10_000, 200);
    expect(allowed.errors).toBeUndefined();
    expect(allowed.messages[0]).toEqual({ batchId, status: 'CONFIRMED' });
  } finally {
    await Promise.all([refusedClient.close(), allowedClient.close()]);
  }
});

test('validates channel names, markets and what the token may carry', async () => {
  expectError(await org.pro.post(AUTH, { channels: ['depth:RTA-USDC'] }), 422, 'INVALID_FIELD', /channels\.0: 'depth:RTA-USDC' is not a channel; channels are book:<SYMBOL>/);
  expectError(await org.pro.post(AUTH, { channels: ['orders', 'book:NOPE-USDC'] }), 422, 'INVALID_FIELD', /channels\.1: no market 'NOPE-USDC'/);
  // A public-feed token cannot name the private channels.
  expectError(await org.pro.post(AUTH, { permissions: ['orderbook_market:read'], channels: ['fills'] }), 403, 'FORBIDDEN', /'fills' needs the permission 'orderbook_order:read'/);
  expectError(await org.pro.post(AUTH, { permissions: ['orderbook_market:read'], channels: ['settlement'] }), 403, 'FORBIDDEN', /'settlement' needs the permission 'orderbook_settlement:read'/);
  expectError(await org.pro.post(AUTH, { permissions: ['orderbook_market:manage'] }), 403, 'FORBIDDEN', /lacks the permission 'orderbook_market:manage'/);
  expectError(await org.pro.post(AUTH, { channels: [] }), 422, 'INVALID_FIELD', /channels/);
});

test('needs orderbook_market:read, like the rest of the engine operations group', async () => {
  const issued = await t.keel.services.apiKeys.issue({ organizationId: org.orgId, name: 'orders only', host: 'pro', scopes: ['orderbook_order:read'], tier: 'Business' });
  const res = await org.pro.with({ apiKey: issued.secret, orgId: org.orgId }).post(AUTH, {});
  expectError(res, 403, 'FORBIDDEN', /orderbook_market:read/);
});

test('the token opens a graphql-ws connection on the order-book host (connection parameter `token`)', async () => {
  const { body } = await org.pro.post(AUTH, { channels: [`ticker:${SYMBOL}`] });
  let acknowledged = false;
  const client = createClient({ url: `${t.proUrl.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { token: body.data.token }, retryAttempts: 0, lazy: false, on: { connected: () => (acknowledged = true) } });
  try {
    await eventually(() => acknowledged, 5_000);
  } finally {
    await client.dispose();
  }
});

test('is documented in the OpenAPI document of the order-book host', async () => {
  const doc = (await org.pro.get('/v1/openapi.json')).body;
  const op = doc.paths['/v1/orderbook/realtime/auth'].post;
  expect(op.summary).toMatch(/Realtime channel authorisation/);
  expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/RealtimeAuthInput');
  expect(doc.components.schemas.RealtimeAuthInput.properties.channels.description).toMatch(/book:<SYMBOL>/);
  expect(Object.keys(op.responses)).toContain('201');
  expect(doc.paths['/v1/orderbook/tokens'].post).toBeDefined();
  const core = (await org.core.get('/v1/openapi.json')).body;
  expect(core.paths['/v1/tokens'].post.summary).toMatch(/bearer token/);
  for (const d of [doc, core]) {
    expect(d.security).toEqual([{ apiKey: [], orgId: [] }, { bearerToken: [] }]);
    expect(d.components.securitySchemes.bearerToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  }
});
