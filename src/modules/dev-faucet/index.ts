/**
 * The dev-faucet module's face: what other modules may use of it. The dev chains' faucet (sandbox only).
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { DevFaucetService } from './dev-faucet.service';

export { createDevFaucetServices } from './dev-faucet-services';

/** The dev-faucet module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface DevFaucetServices {
  devFaucet: DevFaucetService;
}
