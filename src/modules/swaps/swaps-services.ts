import type { Platform } from '../../platform/platform';
import { percentBasisPoints } from '../../platform/decimal';
import type { ChainNetworks, ChainService } from '../chains';
import type { SendingWallets } from '../wallets';
import type { SettlementContractGuard, TransferService } from '../withdrawals';
import type { DestinationScreen } from './destination-screen';
import { DexQuoter } from './dex-quoter';
import { SwapService } from './swap.service';

/** The swaps module's services (SwapsServices), built from what they use; `destinationScreen` is a port filled by aml. */
export function createSwapsServices(
  platform: Pick<Platform, 'db' | 'config' | 'unitOfWork'>,
  deps: { chains: ChainService; networks: ChainNetworks; sendingWallets: SendingWallets; transfers: TransferService; settlementContractGuard: SettlementContractGuard; destinationScreen: DestinationScreen },
) {
  const { destinationScreen } = deps;
  const swaps = new SwapService(platform.db, deps.sendingWallets, deps.chains, deps.networks, deps.transfers, new DexQuoter(), destinationScreen, deps.settlementContractGuard, platform.unitOfWork, percentBasisPoints(platform.config.SWAP_MAX_PRICE_IMPACT_PERCENT));
  return { swaps, destinationScreen };
}
