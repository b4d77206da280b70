import { join } from 'node:path';
import { ChildProcess } from 'node:child_process';
import { cpuRatio, createBenchOrganization, freshDatabase, keelCli, LoadRun, loadRun, medianRun, ratioToYardstick, residentMb, startKeelProcess, startNodeProcess, stopProcess } from './support';

const load = (url: string, seconds: number, headers: Record<string, string>, server?: ChildProcess) => loadRun({ url, connections: 50, duration: seconds, headers }, server);
const summary = (runs: LoadRun[]) => medianRun(runs, 'requestsPerSecond');
/** Positions in the yardstick list of the two that ratios are taken against. */
const RATE_LIMITED = 1;
const STACK_FLOOR = 2;

interface Yardstick {
  what: string;
  script: string;
  port: number;
  env: NodeJS.ProcessEnv;
}

/**
 * Authenticated GET throughput on the core host: `GET /v1/api-keys` (auth, rate limit, the REST
 * shim, a GraphQL execution and a PostgreSQL query per request) at 50 connections.
 * Rate limits are raised (RATE_LIMIT_SCALE) but still counted in Redis on every request.
 * Beside it, run for run, four yardsticks: a bare node:http server running the same SQL, and the
 * same server spending the key's rate limit in Redis first (http-floor-server.ts), so the figure can
 * be read against what this machine allows; and the least the design card's stack does for the same
 * read (http-stack-floor-server.ts: Fastify, the rate limit, a type-graphql resolver compiled by
 * graphql-jit, the same SQL), so the part of the gap that is Keel's own shows apart from the stack's,
 * and that floor again on bare node:http, so Fastify's share shows apart from GraphQL's.
 * Each run prints Keel's ratio to the rate-limited yardstick (rate and p99), Keel's and the stack
 * floor's ratios to each other and to it, Keel's peak RSS, and each server's CPU time per request
 * (Keel's as a multiple of the yardstick's and of the stack floor's).
 * A third argument names another path, e.g. `/health` for the unauthenticated ceiling (no yardsticks).
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
  const org = createBenchOrganization(env);
  const headers = { apiKey: org.adminKey, orgId: org.orgId };
  const floorEnv = { DATABASE_URL: env.DATABASE_URL, ORG_ID: org.orgId };
  const yardsticks: Yardstick[] =
    path === '/v1/api-keys'
      ? [
          { what: 'node:http + the same prepared SQL, nothing else', script: 'http-floor-server.js', port: 4901, env: floorEnv },
          { what: "node:http + Keel's Redis rate limit + the same prepared SQL", script: 'http-floor-server.js', port: 4902, env: { ...floorEnv, RATE_LIMIT_KEY: 'bench' } },
          {
            what: "the stack's floor: Fastify + Keel's Redis rate limit + a type-graphql resolver compiled by graphql-jit running the same prepared SQL + the list envelope",
            script: 'http-stack-floor-server.js',
            port: 4903,
            env: floorEnv,
          },
          {
            what: 'the same floor without Fastify: node:http + the rate limit + type-graphql compiled by graphql-jit + the same prepared SQL',
            script: 'http-stack-floor-server.js',
            port: 4904,
            env: { ...floorEnv, STACK_FLOOR_HTTP: 'node' },
          },
        ]
      : [];
  const keel = await startKeelProcess(env, `http://127.0.0.1:${port}/ready`);
  const processes = [keel];
  try {
    for (const y of yardsticks) {
      processes.push(await startNodeProcess([join(__dirname, y.script)], { ...y.env, PORT: String(y.port) }, `http://127.0.0.1:${y.port}/ready`));
    }
    const keelRuns: LoadRun[] = [];
    const yardstickRuns: LoadRun[][] = yardsticks.map(() => []);
    await load(`http://127.0.0.1:${port}${path}`, 3, headers); // warm-up
    for (const y of yardsticks) await load(`http://127.0.0.1:${y.port}/`, 3, {});
    for (let i = 0; i < runs; i++) {
      keelRuns.push(await load(`http://127.0.0.1:${port}${path}`, seconds, headers, keel));
      for (const [j, y] of yardsticks.entries()) yardstickRuns[j].push(await load(`http://127.0.0.1:${y.port}/`, seconds, {}, processes[j + 1]));
    }
    return {
      benchmark: 'http',
      endpoint: `GET ${path} (core host${path.startsWith('/v1/') ? ', authenticated' : ''})`,
      connections: 50,
      secondsPerRun: seconds,
      runs: keelRuns,
      median: summary(keelRuns),
      peakRssMbSinceStart: residentMb(keel.pid, 'VmHWM'),
      yardsticks: yardsticks.map((y, j) => ({ what: y.what, runs: yardstickRuns[j], median: summary(yardstickRuns[j]) })),
      ...(yardsticks.length
        ? {
            ratioToRateLimitedYardstick: ratioToYardstick(keelRuns, yardstickRuns[RATE_LIMITED]),
            ratioToStackFloor: ratioToYardstick(keelRuns, yardstickRuns[STACK_FLOOR]),
            stackFloorRatioToRateLimitedYardstick: ratioToYardstick(yardstickRuns[STACK_FLOOR], yardstickRuns[RATE_LIMITED]),
            cpuPerRequestTimesRateLimitedYardstick: cpuRatio(keelRuns, yardstickRuns[RATE_LIMITED]),
            cpuPerRequestTimesStackFloor: cpuRatio(keelRuns, yardstickRuns[STACK_FLOOR]),
            machineCpuPerRequestTimesRateLimitedYardstick: cpuRatio(keelRuns, yardstickRuns[RATE_LIMITED], 'machineCpuMicrosPerRequest'),
            machineCpuPerRequestTimesStackFloor: cpuRatio(keelRuns, yardstickRuns[STACK_FLOOR], 'machineCpuMicrosPerRequest'),
          }
        : {}),
      target: { requestsPerSecond: 5000, latencyP99Ms: 20 },
    };
  } finally {
    for (const child of processes) await stopProcess(child);
  }
}
