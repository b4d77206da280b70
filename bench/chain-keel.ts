import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { startKeel } from '../src/app';
import { freshDatabase } from './support';

/** Keel in this process for the chain benchmarks: the api role only (the benchmark runs its own deposit watcher), a fresh database, the given chains. */
export async function startChainBenchKeel(name: string, keelChains: string) {
  const config = loadConfig(
    {},
    {
      DATABASE_URL: await freshDatabase(`keel_bench_${name}`),
      REDIS_PREFIX: `keelbench:${name}:`,
      KEEL_ROLES: 'api',
      HOST: '127.0.0.1',
      CORE_PORT: 0,
      PRO_PORT: 0,
      LOG_LEVEL: 'silent',
      KEEL_MASTER_KEY: randomBytes(32).toString('hex'),
      KEEL_CHAINS: keelChains,
    },
  );
  const keel = await startKeel(config, createLogger(process.env.BENCH_LOG_LEVEL === 'debug' ? 'debug' : 'silent'));
  return { config, keel };
}
