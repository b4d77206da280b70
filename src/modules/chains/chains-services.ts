import type { Platform } from '../../platform/platform';
import type { ChainNetworks } from './chain-networks';
import { ChainService } from './chain.service';

/** The chains module's services (ChainsServices): the registry, and the chain networks this process started. */
export function createChainsServices(platform: Pick<Platform, 'db'>, networks: ChainNetworks) {
  return { chains: new ChainService(platform.db), networks };
}
