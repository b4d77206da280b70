import type { Platform } from '../../platform/platform';
import type { ChainNetworks, ChainService } from '../chains';
import type { SendingWallets } from '../wallets';
import type { RecipientScreen, SettlementContractGuard, SettlementContracts, TransferService } from '../withdrawals';
import { SigningOutcomes } from './signing-outcomes';
import { SigningRecords } from './signing-records';
import { SigningService } from './signing.service';

/** The signing module's services (SigningServices), built from what they use; `settlementContracts` (the withdrawals module's port, filled by settlement): calls of Keel's settlement contract are refused, and `settlementContractGuard` refuses it as a token's recipient. */
export function createSigningServices(
  platform: Pick<Platform, 'db' | 'outbox' | 'unitOfWork'>,
  deps: { chains: ChainService; networks: ChainNetworks; sendingWallets: SendingWallets; transfers: TransferService; screen: RecipientScreen; settlementContracts: SettlementContracts; settlementContractGuard: SettlementContractGuard },
) {
  const { chains, networks, sendingWallets, transfers } = deps;
  const signingRecords = new SigningRecords(platform.db, platform.outbox);
  const signingDeps = { chains, networks, screen: deps.screen, settlementContracts: deps.settlementContracts, settlementContractGuard: deps.settlementContractGuard, ensureFunds: transfers.ensureFunds.bind(transfers) };
  const signing = new SigningService(sendingWallets, networks, transfers, signingRecords, signingDeps, platform.unitOfWork);
  return { signing, signingOutcomes: new SigningOutcomes(sendingWallets, networks, signingRecords, signingDeps) };
}
