import { onboardOrganization } from '../src/modules/api-keys/onboarding';
import { buildHostSchema } from '../src/schema';
import { coreRoutes } from '../rest-compat/routes/core';
import { compileRoute } from '../rest-compat/compile';
import { compiledRunner } from '../rest-compat/executor';
import { Pool } from 'pg';
import { CallCost, cpuPerCall, startBenchKeel } from './in-process';
import { median } from './support';
import { stackFloorApp } from './http-stack-floor-server';

/**
 * CPU time per request inside one Keel process, with no sockets in between (Fastify's inject):
 * `/health`, an authenticated request that finds no route (authentication and the rate limit
 * only) and `GET /v1/api-keys` (plus the REST shim, GraphQL, the ORM and one PostgreSQL query).
 * The differences tell what each layer costs; beside them, each layer called on its own (the rate
 * limit's Redis script, the monthly quota's, authentication from the per-node cache, the REST row's GraphQL operation
 * run by its compiled runner without Fastify (resolver and service included), the api-keys service
 * with its PostgreSQL query), and the http benchmark's stack floor answering the same read
 * (http-stack-floor-server.ts: Fastify, the rate limit, type-graphql compiled by graphql-jit, the
 * same SQL on a bare pg pool), the least the design card's stack spends on it, and that floor's
 * answer to a path with no route (the rate limit, its headers and the error envelope). CPU includes
 * V8's garbage-collector threads. `multipleOfFloor` prints Keel's read and 404 as multiples of those
 * floors, run for run.
 */
export async function run(args: string[]): Promise<object> {
  const requests = Number(args[0] ?? 3000);
  const runs = Number(args[1] ?? 3);
  const { keel, config } = await startBenchKeel('request_cost', { KEEL_ROLES: 'api' });
  try {
    const org = await onboardOrganization(keel.platform.db, keel.services, { name: 'bench', tier: 'Business', proAccess: false });
    const headers = { apikey: org.adminKey, orgid: org.orgId };
    const app = keel.core!.app;
    const paths = { health: '/health', authenticatedNotFound: '/v1/no-such-route', listApiKeys: '/v1/api-keys' };
    const { platform, services } = keel;
    const listRow = coreRoutes.find((r) => r.method === 'GET' && r.path === '/v1/api-keys')!;
    const schema = await buildHostSchema('core');
    const listOperation = compiledRunner(schema, compileRoute(schema, listRow).document);
    const principal = await platform.authenticator.authenticate('core', { apiKey: org.adminKey, orgId: org.orgId });
    const floorPool = new Pool({ connectionString: config.DATABASE_URL, max: 5 });
    const floor = await stackFloorApp({ pool: floorPool, organizationId: org.orgId }, platform.rateLimiter);
    const layers: Record<string, () => Promise<unknown>> = {
      rateLimitOnly: () => platform.rateLimiter.consume('Business', org.orgId),
      monthlyQuotaOnly: () => platform.quota.spend(org.orgId, principal.apiKeyId),
      authenticateOnly: () => platform.authenticator.authenticate('core', { apiKey: org.adminKey, orgId: org.orgId }),
      listApiKeysOperationOnly: async () => {
        const result = await listOperation({}, { host: 'core', principal, requestId: 'bench', services });
        if (result.errors?.length) throw result.errors[0];
      },
      listApiKeysServiceOnly: () => services.apiKeys.list(org.orgId, { limit: 50, offset: 0 }),
      stackFloorListApiKeys: async () => {
        const res = await floor.inject({ method: 'GET', url: '/' });
        if (res.statusCode !== 200) throw new Error(`the stack floor: ${res.statusCode}`);
      },
      stackFloorNotFound: async () => {
        const res = await floor.inject({ method: 'GET', url: paths.authenticatedNotFound, headers });
        if (res.statusCode !== 404) throw new Error(`the stack floor's 404: ${res.statusCode}`);
      },
    };
    const calls: Record<string, () => Promise<unknown>> = {
      ...Object.fromEntries(
        Object.entries(paths).map(([name, url]) => [
          name,
          async () => {
            const res = await app.inject({ method: 'GET', url, headers });
            if (res.statusCode >= 500) throw new Error(`${url}: ${res.statusCode}`);
          },
        ]),
      ),
      ...layers,
    };
    // 20 requests in flight, as a loaded server would have.
    const costs = await cpuPerCall(calls, { perRun: requests, runs, inFlight: 20 });
    const result = Object.fromEntries(Object.entries(costs).map(([name, c]) => [name, { cpuMicrosPerRequest: c.cpuMicros, requestsPerSecond: c.callsPerSecond, runs: c.runs }]));
    await floor.close();
    await floorPool.end();
    return { benchmark: 'request-cost', requestsPerRun: requests, inFlight: 20, ...result, ...multiplesOfFloors(costs) };
  } finally {
    await keel.stop();
  }
}

/**
 * Keel's CPU per request as a multiple of its stack floor's, run for run (the calls alternate within
 * each run, so both see the machine alike) and the median: the read beside the floor's read, the
 * authenticated 404 beside the floor's 404 plus authentication from the per-node cache, which the
 * floor does not do.
 */
function multiplesOfFloors(costs: Record<string, CallCost>): { multipleOfFloor?: Record<string, { median: number; runs: number[] }> } {
  const multiple = (keel: number[], floor: number[]) => {
    const runs = keel.map((k, i) => Math.round((k / floor[i]) * 100) / 100);
    return { median: Math.round(median(runs) * 100) / 100, runs };
  };
  const { listApiKeys, stackFloorListApiKeys, authenticatedNotFound, stackFloorNotFound, authenticateOnly } = costs;
  const found: Record<string, { median: number; runs: number[] }> = {};
  if (listApiKeys && stackFloorListApiKeys) found.listApiKeys = multiple(listApiKeys.runs, stackFloorListApiKeys.runs);
  if (authenticatedNotFound && stackFloorNotFound && authenticateOnly) {
    found.authenticatedNotFound = multiple(authenticatedNotFound.runs, stackFloorNotFound.runs.map((f, i) => f + authenticateOnly.runs[i]));
  }
  return Object.keys(found).length ? { multipleOfFloor: found } : {};
}
