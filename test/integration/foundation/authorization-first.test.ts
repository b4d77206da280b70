import http from 'node:http';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { ApiClient } from '../../support/api-client';
import { useTestKeel } from '../../support/use-test-keel';

/**
 * Authorisation before validation: a key without the scope or permission an operation needs gets
 * 403 naming it whatever its body or variables hold; only an allowed caller learns what is wrong
 * with its input (422). Over the REST shim, GraphQL over HTTP and graphql-ws alike.
 */
let readOnly: ApiClient;
let writer: ApiClient;
let walletId: string;
const fake = '00000000-0000-4000-8000-000000000000';

async function coreKey(scopes: string[]): Promise<ApiClient> {
  const res = await org.core.post('/v1/api-keys', { name: scopes.join('+'), scopes });
  expect(res.status).toBe(201);
  return org.core.with({ apiKey: res.body.data.secret, orgId: org.orgId });
}

const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100 }, { orgs: 1 });
beforeAll(async () => {
  readOnly = await coreKey(['read']);
  writer = await coreKey(['write']);
  const [chain] = (await org.core.get('/v1/blockchains')).body.data;
  walletId = (await org.core.post('/v1/master-wallets', { blockchainId: chain.id, name: 'Treasury' })).body.data.id;
});

/** Bodies each wrong in a different way: types, unknown and missing fields, NUL text, not an object. */
const invalidBodies: { method: string; path: string; body: unknown; scope: string }[] = [
  { method: 'POST', path: '/v1/master-wallets', body: { name: 5, bogus: true }, scope: 'write' },
  { method: 'POST', path: '/v1/master-wallets', body: { blockchainId: fake, name: 'nul\u0000name' }, scope: 'write' },
  { method: 'PATCH', path: '/v1/master-wallets/{wallet}', body: { isActive: 'yes', configurations: 7 }, scope: 'write' },
  { method: 'PATCH', path: '/v1/master-wallets/not-a-uuid', body: [1, 2, 3], scope: 'write' },
  { method: 'POST', path: '/v1/master-wallets/{wallet}/transfer', body: { assets: 'everything' }, scope: 'write' },
  { method: 'POST', path: '/v1/webhooks', body: { url: 42, eventTypes: 'all' }, scope: 'write' },
  { method: 'POST', path: '/v1/api-keys', body: { scopes: ['root'], tier: 'Galactic' }, scope: 'admin' },
  { method: 'POST', path: `/v1/api-keys/${fake}/rotate`, body: { gracePeriodSeconds: -1 }, scope: 'admin' },
];

describe('REST: a key without the scope', () => {
  it.each(invalidBodies)('$method $path with an invalid body is 403 naming $scope, never 422', async ({ method, path, body, scope }) => {
    const res = await readOnly.request(method, path.replace('{wallet}', walletId), { body, headers: { 'Idempotency-Key': `auth-first-${Math.random()}` } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect(res.body.error.message).toContain(`'${scope}'`);
  });

  it('an allowed caller is told what is wrong with the same bodies', async () => {
    const res = await writer.post('/v1/master-wallets', { name: 5, bogus: true });
    expect(res.status).toBe(422);
    const transfer = await writer.post(`/v1/master-wallets/${walletId}/transfer`, { assets: 'everything' });
    expect(transfer.status).toBe(422);
    const nul = await writer.post('/v1/master-wallets', { blockchainId: fake, name: 'nul\u0000name' });
    expect(nul.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'name' }] } });
  });
});

describe('GraphQL over HTTP: a key without the scope', () => {
  const operations: { query: string; variables?: Record<string, unknown>; scope: string }[] = [
    { query: 'mutation($input: CreateMasterWalletInput!) { createMasterWallet(input: $input) { id } }', variables: { input: { name: 5, nope: true } }, scope: 'write' },
    { query: 'mutation($input: CreateMasterWalletInput!) { createMasterWallet(input: $input) { id } }', scope: 'write' },
    { query: 'mutation($id: ID!, $input: UpdateMasterWalletInput!) { updateMasterWallet(id: $id, input: $input) { id } }', variables: { id: [1], input: { isActive: 'yes' } }, scope: 'write' },
    { query: 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { id } }', variables: { input: { name: '', scopes: 'read' } }, scope: 'admin' },
    { query: 'mutation($input: CreateWebhookInput!) { ... on Mutation { createWebhook(input: $input) { id } } }', variables: { input: { url: 'nul\u0000' } }, scope: 'write' },
    { query: 'query { organization { id } } mutation Named($input: CreateApiKeyInput!) { ...keys } fragment keys on Mutation { createApiKey(input: $input) { id } }', variables: { input: {} }, scope: 'admin' },
  ];

  it.each(operations)('$query is 403 naming $scope whatever its variables', async ({ query, variables, scope }) => {
    const body: Record<string, unknown> = { query, variables };
    if (query.includes('Named')) body.operationName = 'Named';
    const res = await readOnly.request('POST', '/graphql', { body });
    expect(res.status).toBe(403);
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(res.body.errors[0].message).toContain(`'${scope}'`);
  });

  it('over GET, what is authorised is what runs: a malformed escape or a fragment after the document does not skip the check', async () => {
    const query = encodeURIComponent('{ apiKeys { items { id nope } } }');
    for (const search of [`query=${query}`, `query=${query}%0A%23%ZZ`]) {
      const res = await readOnly.request('GET', `/graphql?${search}`, { headers: { 'apollo-require-preflight': 'true' } });
      expect(res.status).toBe(403);
      expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    }
    // A fragment, which HTTP clients do not send but a raw request can: Apollo reads the search up to it.
    const raw = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const { hostname, port } = new URL(t.coreUrl);
      const req = http.request({ hostname, port, path: `/graphql?query=${query}#%0A}}}`, headers: { apiKey: readOnly.credentials.apiKey!, orgId: readOnly.credentials.orgId!, 'apollo-require-preflight': 'true' } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(raw.status).toBe(403);
    expect(raw.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it("a variable left out is checked at its operation's default: a write key setting security through a default is 403 naming admin", async () => {
    const query = 'mutation($id: ID!, $c: JSONObject = {security: {allowedRecipients: []}}, $active: Boolean = "yes") { updateMasterWallet(id: $id, input: {configurations: $c, isActive: $active}) { id } }';
    const res = await writer.graphql(query, { id: walletId });
    expect(res.status).toBe(403);
    expect(res.body.errors[0].message).toContain("'admin'");
  });

  it('an allowed caller is told what is wrong with its variables', async () => {
    const res = await writer.graphql('mutation($input: CreateMasterWalletInput!) { createMasterWallet(input: $input) { id } }', { input: { name: 5 } });
    expect(res.body.errors[0].extensions.code).toMatch(/BAD_REQUEST|VALIDATION_ERROR|INVALID_FIELD/);
  });

  it('reads stay open to a read key', async () => {
    const res = await readOnly.graphql('{ organization { id } }');
    expect(res.status).toBe(200);
    expect(res.body.data.organization.id).toBe(org.orgId);
  });
});

describe('the pro host: permissions before validation', () => {
  it('an order with an invalid body is 403 naming orderbook_order:create for a read-only key, REST and GraphQL', async () => {
    const marketsOnly = (await org.core.post('/v1/api-keys', { name: 'market data', scopes: ['orderbook_market:read'], host: 'PRO' })).body.data.secret;
    const client = new ApiClient(t.proUrl, { apiKey: marketsOnly, orgId: org.orgId });
    const rest = await client.post('/v1/orderbook/orders', { walletId: 7, side: 'SIDEWAYS' });
    expect(rest.status).toBe(403);
    expect(rest.body.error.message).toContain('orderbook_order:create');
    const gql = await client.graphql('mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { id } }', { input: { side: 'SIDEWAYS' } });
    expect(gql.status).toBe(403);
    expect(gql.body.errors[0].message).toContain('orderbook_order:create');
  });
});

describe('graphql-ws: a key without the scope', () => {
  it('a subscription with invalid arguments is refused naming the scope', async () => {
    const secret = (await org.core.post('/v1/api-keys', { name: 'writer', scopes: ['write'] })).body.data.secret;
    const client = createClient({ url: `${t.coreUrl.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { apiKey: secret, orgId: org.orgId }, retryAttempts: 0, lazyCloseTimeout: 0 });
    try {
      const outcome = await new Promise<unknown>((resolve) => {
        client.subscribe({ query: 'subscription($types: [String!]) { events(types: $types) { id } }', variables: { types: 12 } }, { next: resolve, error: resolve, complete: () => resolve('completed') });
      });
      expect(JSON.stringify(outcome)).toContain('FORBIDDEN');
      expect(JSON.stringify(outcome)).toContain("'read'");
    } finally {
      await client.dispose();
    }
  });
});
