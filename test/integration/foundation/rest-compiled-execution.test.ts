import type { ExecutionResult, GraphQLSchema } from 'graphql';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { coreRoutes } from '../../../rest-compat/routes/core';
import { orderbookRoutes } from '../../../rest-compat/routes/orderbook';
import { compileRoute, CompiledRoute } from '../../../rest-compat/compile';
import { compiledRunner, interpretedRunner } from '../../../rest-compat/executor';
import { buildHostSchema } from '../../../src/graphql/schema';
import { toKeelError } from '../../../src/graphql/errors';
import type { GraphQLContext } from '../../../src/graphql/context';
import type { Host } from '../../../src/platform/auth/permissions';

/**
 * The REST shim runs its queries compiled by graphql-jit: every GET row of both hosts, run both
 * ways with the same variables and caller, answers the same data and the same errors (success,
 * 404 for an unknown or malformed id, 422 from argument validation, 422 from variable coercion,
 * a missing required argument, 403 for a key without the grant).
 */
let t: TestKeel;
let org: TestOrg;
let readOnly: string;
beforeAll(async () => {
  t = await startTestKeel();
  org = await t.createOrg();
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
function variableCases(route: CompiledRoute): Record<string, unknown>[] {
  const ids = (value: unknown) => Object.fromEntries(route.pathArgs.map(({ arg }) => [arg.name, value]));
  const cases: Record<string, unknown>[] = [{}, ids('8d2f1a4e-3b6c-4d7e-9f10-1a2b3c4d5e6f'), ids('not-an-id')];
  const names = route.queryArgs.map((a) => a.name);
  if (names.includes('limit')) cases.push({ limit: 0 }, { limit: 1000 }, { limit: 'abc' }, { limit: 2, offset: 1 });
  for (const arg of route.queryArgs) cases.push({ ...ids('8d2f1a4e-3b6c-4d7e-9f10-1a2b3c4d5e6f'), [arg.name]: { not: 'a scalar' } });
  return cases;
}

async function contextFor(host: Host, apiKey: string): Promise<GraphQLContext> {
  const principal = await t.keel.platform.authenticator.authenticate(host, { apiKey, orgId: org.orgId });
  return { host, principal, requestId: 'differential', services: t.keel.services };
}

async function compareRoutes(host: Host, schema: GraphQLSchema, routes: CompiledRoute[], apiKey: string): Promise<number> {
  const context = await contextFor(host, apiKey);
  let compared = 0;
  for (const route of routes) {
    const compiled = compiledRunner(schema, route.document);
    const interpreted = interpretedRunner(schema, route.document);
    for (const variables of variableCases(route)) {
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
