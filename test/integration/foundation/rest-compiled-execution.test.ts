import { ExecutionResult, GraphQLSchema, isNonNullType } from 'graphql';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { coreRoutes } from '../../../rest-compat/routes/core';
import { orderbookRoutes } from '../../../rest-compat/routes/orderbook';
import { compileRoute, CompiledRoute } from '../../../rest-compat/compile';
import { compiledRunner, interpretedRunner } from '../../../rest-compat/executor';
import { buildHostSchema } from '../../../src/schema';
import { toKeelError } from '../../../src/graphql-kit/errors';
import type { GraphQLContext } from '../../../src/graphql-kit/context';
import type { Host } from '../../../src/platform/auth/permissions';

/**
 * The REST shim runs its operations compiled by graphql-jit: every GET row of both hosts, run both
 * ways with the same variables and caller, answers the same data and the same errors (success,
 * 404 for an unknown or malformed id, 422 from argument validation, 422 from variable coercion,
 * a missing required argument, 403 for a key without the grant); every mutation row refuses the
 * same bad input the same way, and mutations that write answer alike but for what is new each time
 * (ids, secrets, clocks, sequences).
 */
let t: TestKeel;
let org: TestOrg;
let readOnly: string;
/** The organisation the write tests write as, so the read tests' lists stay as they were made. */
let writer: TestOrg;
beforeAll(async () => {
  t = await startTestKeel();
  org = await t.createOrg();
  writer = await t.createOrg();
  for (let i = 0; i < 3; i++) await org.core.post('/v1/api-keys', { name: `k${i}`, scopes: ['read'] });
  await org.core.post('/v1/webhooks', { url: 'https://example.com/hook', eventTypes: ['master.created'] });
  readOnly = (await org.core.post('/v1/api-keys', { name: 'reader', scopes: ['read'] })).body.data.secret;
});
afterAll(() => t.stop());

/** Read from the clock or a lease that moves on its own between the two runs, not from the request. */
const MOVING = new Set(['serverTime', 'uptimeSeconds', 'acceptingUntil', 'leaseExpiresAt', 'leaseExpiresInMs']);

/** What the REST shim makes of a result: the data, and each error as the envelope would carry it. */
function asRest(result: ExecutionResult): unknown {
  return {
    data: result.data === undefined ? 'absent' : JSON.parse(JSON.stringify(result.data, (key, value) => (MOVING.has(key) ? 'moves' : value))),
    errors: (result.errors ?? []).map((e) => {
      const keel = toKeelError(e);
      return { code: keel.code, status: keel.status, message: keel.message, details: keel.details, path: e.path };
    }),
  };
}

/** Variables a client could send to a row: as given, an unknown id, a malformed one, out-of-range or mistyped paging, a wrong type for every argument. */
const UNKNOWN_ID = '8d2f1a4e-3b6c-4d7e-9f10-1a2b3c4d5e6f';
const idsOf = (route: CompiledRoute, value: unknown) => Object.fromEntries(route.pathArgs.map(({ arg }) => [arg.name, value]));

function variableCases(route: CompiledRoute): Record<string, unknown>[] {
  const ids = (value: unknown) => idsOf(route, value);
  const cases: Record<string, unknown>[] = [{}, ids(UNKNOWN_ID), ids('not-an-id')];
  const names = route.queryArgs.map((a) => a.name);
  if (names.includes('limit')) cases.push({ limit: 0 }, { limit: 1000 }, { limit: 'abc' }, { limit: 2, offset: 1 });
  for (const arg of route.queryArgs) cases.push({ ...ids(UNKNOWN_ID), [arg.name]: { not: 'a scalar' } });
  return cases;
}

/**
 * Variables a client could send to a mutation row that no row can write with: a missing required
 * argument, a body that is not an object or names an unknown field, and, for a row without a body,
 * an unknown or malformed id.
 */
function mutationCases(route: CompiledRoute): Record<string, unknown>[] {
  const cases: Record<string, unknown>[] = [];
  if (route.fieldDef.args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined)) cases.push({});
  if (route.bodyArg) {
    cases.push({ ...idsOf(route, UNKNOWN_ID), [route.bodyArg.name]: 'not an object' }, { ...idsOf(route, UNKNOWN_ID), [route.bodyArg.name]: { not: 'a field' } });
  } else if (route.pathArgs.length) {
    cases.push(idsOf(route, UNKNOWN_ID), idsOf(route, 'not-an-id'));
  }
  return cases;
}

async function contextFor(host: Host, apiKey: string, orgId = org.orgId): Promise<GraphQLContext> {
  const principal = await t.keel.platform.authenticator.authenticate(host, { apiKey, orgId });
  return { host, principal, requestId: 'differential', services: t.keel.services };
}

async function compareRoutes(host: Host, schema: GraphQLSchema, routes: CompiledRoute[], apiKey: string, cases = variableCases): Promise<number> {
  const context = await contextFor(host, apiKey);
  let compared = 0;
  for (const route of routes) {
    const compiled = compiledRunner(schema, route.document);
    const interpreted = interpretedRunner(schema, route.document);
    for (const variables of cases(route)) {
      const label = `${route.row.method} ${route.row.path} ${JSON.stringify(variables)}`;
      const expected = asRest(await interpreted(variables, context));
      expect({ label, result: asRest(await compiled(variables, context)) }).toEqual({ label, result: expected });
      compared++;
    }
  }
  return compared;
}

test.each([
  ['core', coreRoutes],
  ['pro', orderbookRoutes],
] as const)('every GET row of the %s host answers the same compiled as interpreted', async (host, rows) => {
  const schema = await buildHostSchema(host);
  const routes = rows.filter((r) => r.method === 'GET').map((row) => compileRoute(schema, row));
  const compared = await compareRoutes(host, schema, routes, host === 'core' ? org.adminKey : org.proKey!);
  expect(compared).toBeGreaterThan(routes.length * 3);
});

test.each([
  ['core', coreRoutes],
  ['pro', orderbookRoutes],
] as const)('every mutation row of the %s host refuses bad input the same compiled as interpreted', async (host, rows) => {
  const schema = await buildHostSchema(host);
  const routes = rows.filter((r) => r.method !== 'GET').map((row) => compileRoute(schema, row));
  const compared = await compareRoutes(host, schema, routes, host === 'core' ? org.adminKey : org.proKey!, mutationCases);
  expect(compared).toBeGreaterThan(routes.length);
});

/** Values that are new on every write, compared by type only. */
const FRESH = new Set(['id', 'secret', 'prefix', 'sequence', 'createdAt', 'updatedAt', 'expiresAt', 'revokedAt']);
const sameButFresh = (result: ExecutionResult) =>
  JSON.parse(JSON.stringify(asRest(result), (key, value) => (FRESH.has(key) && value !== null ? `fresh ${typeof value}` : value)));

/** Runs a mutation row both ways as the writer organisation, each way with its own variables; the two results, fresh values masked. */
async function writeBothWays(host: Host, field: string, variables: (way: 'compiled' | 'interpreted') => Record<string, unknown>) {
  const schema = await buildHostSchema(host);
  const row = (host === 'core' ? coreRoutes : orderbookRoutes).find((r) => r.method !== 'GET' && r.field === field)!;
  const route = compileRoute(schema, row);
  const context = await contextFor(host, host === 'core' ? writer.adminKey : writer.proKey!, writer.orgId);
  const compiled = await compiledRunner(schema, route.document)(variables('compiled'), context);
  const interpreted = await interpretedRunner(schema, route.document)(variables('interpreted'), context);
  return { compiled, interpreted, masked: { compiled: sameButFresh(compiled), interpreted: sameButFresh(interpreted) } };
}

test('mutations that write answer alike compiled and interpreted: a key created and revoked, a webhook created', async () => {
  const created = await writeBothWays('core', 'createApiKey', () => ({ input: { name: 'made both ways', scopes: ['read'] } }));
  expect(created.masked.compiled).toEqual(created.masked.interpreted);
  expect(created.compiled.errors).toBeUndefined();
  const keyIds = { compiled: (created.compiled.data as { createApiKey: { id: string } }).createApiKey.id, interpreted: (created.interpreted.data as { createApiKey: { id: string } }).createApiKey.id };
  const revoked = await writeBothWays('core', 'revokeApiKey', (way) => ({ id: keyIds[way] }));
  expect(revoked.masked.compiled).toEqual(revoked.masked.interpreted);
  expect(revoked.compiled.errors).toBeUndefined();
  const hook = await writeBothWays('core', 'createWebhook', () => ({ input: { name: 'both ways', url: 'https://93.184.216.34/both-ways', eventTypes: ['master.created'] } }));
  expect(hook.masked.compiled).toEqual(hook.masked.interpreted);
  expect(hook.compiled.errors).toBeUndefined();
});

test('an order placed and cancelled answers alike compiled and interpreted, and a placement refused for funds is the same error', async () => {
  const chain = (await writer.core.get('/v1/blockchains')).body.data[0];
  const assets = Object.fromEntries((await writer.core.get(`/v1/assets?blockchainId=${chain.id}&limit=100`)).body.data.map((a: { symbol: string; id: string }) => [a.symbol, a]));
  const market = await (await t.operator()).post('/v1/orderbook/markets', { symbol: 'WAYS-USDC', baseAssetId: assets.ETH.id, quoteAssetId: assets.USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1', makerFee: '0.001', takerFee: '0.002' });
  expect(market.status).toBe(201);
  const walletId = (await writer.core.post('/v1/master-wallets', { blockchainId: chain.id, name: 'Both ways' })).body.data.id;
  const order = { walletId, market: 'WAYS-USDC', side: 'BUY', type: 'LIMIT', price: '1000', quantity: '0.5', timeInForce: 'GTC' };
  const refused = await writeBothWays('pro', 'placeOrder', () => ({ input: order }));
  expect(refused.masked.compiled).toEqual(refused.masked.interpreted);
  expect(refused.masked.compiled).toMatchObject({ errors: [{ code: 'INSUFFICIENT_FUNDS' }] });

  await t.keel.platform.db.transaction((trx) => t.keel.services.ledger.credit(trx, { organizationId: writer.orgId, walletId, assetId: assets.USDC.id, amount: 10_000n * 10n ** BigInt(assets.USDC.decimals), reference: 'test:both-ways' }));
  const placed = await writeBothWays('pro', 'placeOrder', () => ({ input: order }));
  expect(placed.masked.compiled).toEqual(placed.masked.interpreted);
  expect(placed.masked.compiled).toMatchObject({ data: { placeOrder: { status: 'OPEN', price: '1000', quantity: '0.5' } }, errors: [] });
  const orderIds = { compiled: (placed.compiled.data as { placeOrder: { id: string } }).placeOrder.id, interpreted: (placed.interpreted.data as { placeOrder: { id: string } }).placeOrder.id };
  const cancelled = await writeBothWays('pro', 'cancelOrder', (way) => ({ id: orderIds[way] }));
  expect(cancelled.masked.compiled).toEqual(cancelled.masked.interpreted);
  expect(cancelled.masked.compiled).toMatchObject({ data: { cancelOrder: { status: 'CANCELLED' } } });
});

test('a key without the grant gets the same 403 both ways, from the auth checker at execution', async () => {
  // The REST handler refuses it earlier (authorisation before validation); this is the check behind it.
  const schema = await buildHostSchema('core');
  const routes = coreRoutes.filter((r) => r.method === 'GET' && r.field === 'apiKeys').map((row) => compileRoute(schema, row));
  const context = await contextFor('core', readOnly);
  for (const route of routes) {
    const compiled = asRest(await compiledRunner(schema, route.document)({}, context));
    expect(compiled).toEqual(asRest(await interpretedRunner(schema, route.document)({}, context)));
    expect(compiled).toMatchObject({ errors: [{ code: 'FORBIDDEN', status: 403 }] });
  }
});

test('a list through the compiled query is the page the service returns', async () => {
  const schema = await buildHostSchema('core');
  const route = compileRoute(schema, coreRoutes.find((r) => r.method === 'GET' && r.path === '/v1/api-keys')!);
  const result = await compiledRunner(schema, route.document)({ limit: 2 }, await contextFor('core', org.adminKey));
  const page = (result.data as { apiKeys: { items: { name: string }[]; total: number; limit: number } }).apiKeys;
  expect({ items: page.items.length, total: page.total, limit: page.limit }).toEqual({ items: 2, total: 6, limit: 2 });
});

test('a null in a non-null field is a server error both ways (500), not the client\'s', async () => {
  const { GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, parse } = await import('graphql');
  const schema = new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: { broken: { type: new GraphQLNonNull(GraphQLString), resolve: () => null } } }) });
  const document = parse('query { broken }');
  const context = await contextFor('core', org.adminKey);
  const compiled = asRest(await compiledRunner(schema, document)({}, context));
  expect(compiled).toEqual(asRest(await interpretedRunner(schema, document)({}, context)));
  expect(compiled).toMatchObject({ data: null, errors: [{ code: 'INTERNAL_ERROR', status: 500 }] });
});
