import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchChains } from './bench-chains';
import { cpuMicros, freshDatabase, KEEL_ROOT, keelCli, median, startNodeProcess, stopProcess } from './support';

/**
 * How soon a restarted order-book node serves: `keel start --roles api,orderbook`, as an operator
 * restarts one, from its spawn until its pro host's `/ready` answers 200 (asked every 10 ms), on a
 * migrated database with the dev chains already running (KEEL_CHAINS, as in a deployment), and the
 * process's CPU until then (module loading included). Beside it, run for run, the yardstick
 * (startup-floor-server.ts): a Node.js process that loads pg, the Redis client and Fastify, connects
 * to both and listens, the least a node start does. A warm-up start, then `runs` of each, alternated;
 * medians. With BENCH_KEEL_ROOT naming another built checkout, that build's `keel start` is measured.
 */
export async function run(args: string[]): Promise<object> {
  const runs = Number(args[0] ?? 5);
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-bench-startup-'));
  const chains = await startBenchChains({}, join(dataDir, 'chains'));
  const env = {
    DATABASE_URL: await freshDatabase('keel_bench_startup'),
    KEEL_CHAINS: chains.keelChains,
    KEEL_MASTER_KEY: randomBytes(32).toString('hex'),
    KEEL_DATA_DIR: join(dataDir, 'node'),
    REDIS_PREFIX: 'keelbench:startup:',
    CORE_PORT: '4930',
    PRO_PORT: '4931',
    LOG_LEVEL: 'warn',
  };
  try {
    keelCli(['migrate'], env);
    const keel = { ms: [] as number[], cpuMs: [] as number[] };
    const floor = { ms: [] as number[], cpuMs: [] as number[] };
    for (let i = 0; i <= runs; i++) {
      const k = await timedStart([join(KEEL_ROOT, 'bin', 'keel.js'), 'start', '--roles', 'api,orderbook'], env, 'http://127.0.0.1:4931/ready');
      const f = await timedStart([join(__dirname, 'startup-floor-server.js')], { DATABASE_URL: env.DATABASE_URL, PORT: '4932' }, 'http://127.0.0.1:4932/ready');
      if (i === 0) continue; // warm-up: the file system's cache
      for (const [into, from] of [[keel, k], [floor, f]] as const) {
        into.ms.push(from.ms);
        into.cpuMs.push(from.cpuMs);
      }
    }
    const summary = (s: { ms: number[]; cpuMs: number[] }) => ({ readyMs: median(s.ms), cpuMs: median(s.cpuMs), runs: s.ms });
    return {
      benchmark: 'startup',
      what: '`keel start --roles api,orderbook` from spawn to its pro host answering /ready 200, on a migrated database, the chains already running',
      runs,
      keel: summary(keel),
      yardstick: { what: 'node: pg + Redis + Fastify loaded, connected and listening', ...summary(floor) },
      ratioToYardstick: { readyMs: Math.round((median(keel.ms) / median(floor.ms)) * 100) / 100, cpuMs: Math.round((median(keel.cpuMs) / median(floor.cpuMs)) * 100) / 100 },
    };
  } finally {
    await chains.stop();
  }
}

/** Starts a Node.js script, times it until readyUrl answers 200 (asked every 10 ms), reads its CPU then, and stops it. */
async function timedStart(args: string[], env: Record<string, string>, readyUrl: string): Promise<{ ms: number; cpuMs: number }> {
  const started = process.hrtime.bigint();
  const child = await startNodeProcess(args, env, readyUrl, 10);
  try {
    return { ms: Math.round(Number(process.hrtime.bigint() - started) / 1e6), cpuMs: Math.round((cpuMicros(child.pid) ?? NaN) / 1000) };
  } finally {
    await stopProcess(child);
  }
}
