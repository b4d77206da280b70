/**
 * The swaps module's face: what other modules may use of it. Swaps on each chain's Uniswap V2.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { DestinationScreen } from './destination-screen';
import type { SwapService } from './swap.service';

export type { DestinationScreen } from './destination-screen';
export { APPROVAL_GAS } from './dex-quoter';
export { shortfallBasisPoints } from './swap-guards';
export { DEFAULT_SLIPPAGE, SwapService, parseOrder, parseSlippage } from './swap.service';
export type { PricedSwap } from './swap.service';

export { createSwapsServices } from './swaps-services';

/** The swaps module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface SwapsServices {
  /** Swaps on each chain's Uniswap V2. */
  swaps: SwapService;
  /** Checks every destination a swap or settlement rule sends to (the AML screening plugs in here). */
  destinationScreen: DestinationScreen;
}
