import type { Platform } from '../../platform/platform';
import type { ChainNetworks, ChainService } from '../chains';
import { DevFaucetService } from './dev-faucet.service';

/** The dev-faucet module's services (DevFaucetServices), built from what they use. */
export function createDevFaucetServices(platform: Pick<Platform, 'config'>, deps: { chains: ChainService; networks: ChainNetworks }) {
  return { devFaucet: new DevFaucetService(platform.config.KEEL_ENV, deps.networks, deps.chains) };
}
