import type { Platform } from '../../platform/platform';
import type { ChainNetworks, ChainService } from '../chains';
import type { AddressService, MasterWalletService } from '../wallets';
import { ChainActivityRecorder } from './chain-activity-recorder';
import { ChainTransferHistoryService } from './chain-transfer-history.service';
import { NftHoldingsService } from './nft-holdings.service';

/** The deposits module's services (DepositsServices), built from what they use. */
export function createDepositsServices(platform: Pick<Platform, 'db' | 'outbox'>, deps: { chains: ChainService; networks: ChainNetworks; masterWallets: MasterWalletService; addresses: AddressService }) {
  const { db } = platform;
  const { chains, masterWallets, addresses } = deps;
  return {
    chainActivity: new ChainActivityRecorder(db, platform.outbox),
    chainTransferHistory: new ChainTransferHistoryService(db, masterWallets, addresses, chains),
    nftHoldings: new NftHoldingsService(db, masterWallets, addresses, chains, deps.networks),
  };
}
