import type { Platform } from '../../platform/platform';
import type { ChainService } from '../chains';
import { AmlService } from './aml.service';
import { FlaggedTransferService } from './flagged-transfer.service';
import { SanctionedDepositFlagger } from './sanctioned-deposit-flagger';
import { shippedSanctionsSnapshot } from './sanctions-files';
import { SanctionsLists } from './sanctions-lists';
import { SanctionsScreen } from './sanctions-screen';
import { WalletAml } from './wallet-aml';

/** The aml module's services (AmlServices), built from what they use. */
export function createAmlServices(platform: Pick<Platform, 'db' | 'outbox' | 'unitOfWork'>, deps: { chains: ChainService }) {
  const { db, outbox } = platform;
  const shippedSanctions = shippedSanctionsSnapshot();
  const sanctions = new SanctionsScreen(shippedSanctions);
  return {
    sanctions,
    sanctionsLists: new SanctionsLists(db),
    shippedSanctions,
    aml: new AmlService(sanctions),
    walletAml: new WalletAml(sanctions),
    flaggedTransfers: new FlaggedTransferService(db, deps.chains, outbox, platform.unitOfWork),
    depositFlagger: new SanctionedDepositFlagger(sanctions, outbox),
  };
}
