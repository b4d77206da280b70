import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, migrate } from '../../src/platform/db/knex';
import { loadConfig } from '../../src/platform/config';
import { createLogger } from '../../src/platform/logger';
import { startDevChains } from '../../src/modules/chains/chain-networks';
import { formatChainsConfig } from '../../src/modules/chains/chain-config';
import type { DevChain } from '../../src/platform/chain/devchain';
import { databaseUrl, RUN_PREFIX_ENV, templateDb, withAdmin } from './databases';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds the migrated template every test file of this run copies. Databases are named after the
 * jest process, so concurrent runs never touch each other's; those of dead runs are dropped.
 */
export default async function globalSetup(): Promise<void> {
  process.env[RUN_PREFIX_ENV] = `keel_test_${process.pid}`;
  await startSharedDevChains();
  const template = templateDb();
  await withAdmin(async (c) => {
    const old = await c.query(`SELECT datname FROM pg_database WHERE datname LIKE 'keel_test_%'`);
    for (const { datname } of old.rows as { datname: string }[]) {
      const pid = Number(datname.split('_')[2]);
      if (!alive(pid) || pid === process.pid) await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    await c.query(`CREATE DATABASE "${template}"`);
  });
  const db = createDb(databaseUrl(template), 2);
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
}

/**
 * Two dev chains for the whole run (ports the OS picks, blocks every second), handed to every test
 * file and Keel child process through KEEL_CHAINS, with one key-encryption key. A test that
 * rewrites a chain's history (reorgs) starts a chain of its own.
 */
async function startSharedDevChains(): Promise<void> {
  const chains: DevChain[] = [];
  (globalThis as { keelTestChains?: DevChain[] }).keelTestChains = chains;
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-test-chains-'));
  const config = loadConfig({}, { DEV_CHAIN_PORT: 0, DEV_CHAIN_BLOCK_INTERVAL_MS: 1000, DEV_CHAIN_CONFIRMATIONS: 2, KEEL_DATA_DIR: dataDir });
  const specs = await startDevChains(config, chains, createLogger('silent'));
  process.env.KEEL_CHAINS = formatChainsConfig(specs);
  process.env.KEEL_MASTER_KEY = randomBytes(32).toString('hex');
}
