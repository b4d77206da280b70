import { loadConfig } from '../platform/config';
import { openPlatform, Platform } from '../platform/platform';
import { createLogger } from '../platform/logger';
import { createServices, Services } from '../services';
import { ChainNetworks } from '../modules/chains/chain-networks';

/**
 * Runs an operator command beside a live deployment: the services on the configured database and
 * Redis, the chains as the registry recorded them; prints what the command returns as one JSON line.
 */
export interface OperatorContext {
  services: Services;
  networks: ChainNetworks;
  platform: Platform;
}

export async function printFromServices(run: (context: OperatorContext) => Promise<unknown>): Promise<void> {
  const config = loadConfig(process.env, { LOG_LEVEL: 'silent' });
  const platform = await openPlatform(config, createLogger('silent'));
  const networks = await ChainNetworks.fromRegistry(platform.db);
  const services = createServices(platform, networks);
  try {
    const result = await run({ services, networks, platform });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await services.walletKeys.close();
    await networks.stop();
    await platform.close();
  }
}
