import { Config, loadConfig } from '../platform/config';
import { openPlatform, Platform } from '../platform/platform';
import { createLogger } from '../platform/logger';
import { createServices, Services } from '../services';
import { ChainNetworks } from '../modules/chains/chain-networks';
import { processNodeId } from '../platform/node-identity';
import { Progress } from './progress';

/** The services on the configured database and Redis, the chains as the registry recorded them: what a process beside a live deployment works with. */
export interface OperatorContext {
  services: Services;
  networks: ChainNetworks;
  platform: Platform;
}

/**
 * Opens an OperatorContext on `env`'s configuration; `close` releases all it holds. Only `keel start`
 * and `keel migrate` create or migrate the database: here one missing or not at this build's
 * migration level is refused (DatabaseNotReady, one line naming it and what to run).
 */
export async function openServices(env: NodeJS.ProcessEnv = process.env, logLevel: Config['LOG_LEVEL'] = 'silent'): Promise<OperatorContext & { close(): Promise<void> }> {
  const config = loadConfig(env, { LOG_LEVEL: logLevel });
  const platform = await openPlatform(config, createLogger(logLevel), { schema: 'require' });
  const networks = await ChainNetworks.fromRegistry(platform.db, platform.config.CHAIN_RPC_TIMEOUT_MS);
  // The command line never leads a shard: it needs no stable id.
  const services = createServices(platform, networks, processNodeId());
  return {
    services,
    networks,
    platform,
    async close() {
      await services.walletKeys.close();
      await networks.stop();
      await platform.close();
    },
  };
}

/**
 * Runs an operator command beside a live deployment; prints what it returns as one JSON line. A
 * long command reports its progress through `progress` (on a terminal only, never with `--json`).
 */
export async function printFromServices(run: (context: OperatorContext & { progress: Progress }) => Promise<unknown>, opts: { json?: boolean } = {}): Promise<void> {
  const progress = new Progress(process.stderr, opts);
  progress.update('connecting to PostgreSQL and Redis…');
  const context = await openServices().finally(() => progress.done());
  try {
    const result = await run({ ...context, progress });
    progress.done();
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    progress.done();
    await context.close();
  }
}
