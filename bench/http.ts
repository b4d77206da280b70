import autocannon from 'autocannon';
import { freshDatabase, keelCli, median, startKeelProcess, stopProcess } from './support';

/**
 * Authenticated GET throughput on the core host: `GET /v1/api-keys` (auth, rate limit, the REST
 * shim, a GraphQL execution and a PostgreSQL query per request) at 50 connections.
 * Rate limits are raised (RATE_LIMIT_SCALE) but still counted in Redis on every request.
 * A third argument names another path, e.g. `/health` for the unauthenticated ceiling.
 */
export async function run(args: string[]): Promise<object> {
  const seconds = Number(args[0] ?? 10);
  const runs = Number(args[1] ?? 3);
  const path = args[2] ?? '/v1/api-keys';
  const port = 4900;
  const env = {
    DATABASE_URL: await freshDatabase('keel_bench_http'),
    REDIS_PREFIX: 'keelbench:http:',
    CORE_PORT: String(port),
    HOST: '127.0.0.1',
    KEEL_ROLES: 'api',
    RATE_LIMIT_SCALE: '100000',
  };
  keelCli(['migrate'], env);
  const org = JSON.parse(keelCli(['org', 'create', '--name', 'bench', '--tier', 'Business', '--json'], env));
  const child = await startKeelProcess(env, `http://127.0.0.1:${port}/ready`);
  try {
    const results = [];
    for (let i = 0; i < runs + 1; i++) {
      const r = await autocannon({
        url: `http://127.0.0.1:${port}${path}`,
        connections: 50,
        duration: i === 0 ? 3 : seconds,
        headers: { apiKey: org.adminKey, orgId: org.orgId },
      });
      if (i === 0) continue; // warm-up
      results.push({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors });
    }
    return {
      benchmark: 'http',
      endpoint: `GET ${path} (core host${path.startsWith('/v1/') ? ', authenticated' : ''})`,
      connections: 50,
      secondsPerRun: seconds,
      runs: results,
      median: {
        requestsPerSecond: median(results.map((r) => r.rps)),
        latencyP50Ms: median(results.map((r) => r.p50)),
        latencyP99Ms: median(results.map((r) => r.p99)),
      },
      target: { requestsPerSecond: 5000, latencyP99Ms: 20 },
    };
  } finally {
    await stopProcess(child);
  }
}
