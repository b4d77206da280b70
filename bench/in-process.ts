import { Keel, startKeel } from '../src/app';
import { Config, loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { freshDatabase, median, seededRandom } from './support';

/**
 * A Keel in the benchmark's own process, for measuring CPU per call without sockets: its own fresh
 * database and Redis prefix, any free ports, its own dev chain (another Keel on the machine may
 * hold the default one), rate limits raised but still counted in Redis.
 */
export async function startBenchKeel(name: string, env: Record<string, string>): Promise<{ keel: Keel; config: Config }> {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: await freshDatabase(`keel_bench_${name}`),
    REDIS_PREFIX: `keelbench:${name}:`,
    CORE_PORT: '0',
    PRO_PORT: '0',
    DEV_CHAIN_PORT: '0',
    RATE_LIMIT_SCALE: '100000',
    ...env,
  });
  // Its log goes to stderr: stdout carries the benchmark's JSON.
  return { keel: await startKeel(config, createLogger('warn', process.stderr)), config };
}

export interface CallCost {
  /** Median CPU microseconds per call (this process: user and system, V8's collector threads included). */
  cpuMicros: number;
  callsPerSecond: number;
  /** Each measured run's CPU microseconds per call. */
  runs: number[];
}

/**
 * CPU per call of each of `calls`: a warm-up and `runs` measured runs of `perRun` calls with
 * `inFlight` in flight, the calls alternated within each run so a busy machine or a growing state
 * weighs on all alike; medians of the runs. Each round runs the calls in another order (a seeded
 * shuffle, the same from one invocation to the next): the collector's work a call leaves behind (a
 * major collection it started) is paid by whichever call runs next, so no call may always follow the
 * same one (in a fixed order the authenticated 404, right after `/health`, paid some 25 µs of it in
 * every run). BENCH_CALLS (names, comma-separated) measures only those,
 * for a CPU profile of one call (`node --cpu-prof scripts/bench.js ...`).
 */
export async function cpuPerCall(allCalls: Record<string, () => Promise<unknown>>, opts: { perRun: number; runs: number; inFlight: number }): Promise<Record<string, CallCost>> {
  const only = process.env.BENCH_CALLS?.split(',');
  const calls = only ? Object.fromEntries(Object.entries(allCalls).filter(([name]) => only.includes(name))) : allCalls;
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(calls).map((name) => [name, []]));
  const rate: Record<string, number[]> = Object.fromEntries(Object.keys(calls).map((name) => [name, []]));
  const random = seededRandom(21);
  for (let i = 0; i < opts.runs + 1; i++) {
    for (const [name, call] of shuffled(Object.entries(calls), random)) {
      const before = process.cpuUsage();
      const started = process.hrtime.bigint();
      let sent = 0;
      await Promise.all(
        Array.from({ length: opts.inFlight }, async () => {
          while (sent++ < opts.perRun) await call();
        }),
      );
      const used = process.cpuUsage(before);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (i === 0) continue; // warm-up
      cpu[name].push((used.user + used.system) / opts.perRun);
      rate[name].push(opts.perRun / seconds);
    }
  }
  return Object.fromEntries(Object.keys(calls).map((name) => [name, { cpuMicros: Math.round(median(cpu[name])), callsPerSecond: Math.round(median(rate[name])), runs: cpu[name].map(Math.round) }]));
}

/** A new array with `items` in a random order drawn from `random` (Fisher–Yates). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
