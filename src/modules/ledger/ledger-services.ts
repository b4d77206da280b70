import type { Platform } from '../../platform/platform';
import type { ChainService } from '../chains';
import type { AddressService, MasterWalletService } from '../wallets';
import { CustodyLedgerSync } from './custody-ledger-sync';
import { LedgerService } from './ledger.service';
import { WalletBalances } from './wallet-balances';
import { WalletDebts } from './wallet-debts';

/** The ledger module's services (LedgerServices), built from what they use. */
export function createLedgerServices(platform: Pick<Platform, 'db' | 'outbox' | 'metrics' | 'logger'>, deps: { chains: ChainService; masterWallets: MasterWalletService; addresses: AddressService }) {
  const ledger = new LedgerService(platform.db, deps.masterWallets, deps.addresses);
  const custodyLedgerSync = new CustodyLedgerSync(ledger, deps.chains, new WalletDebts(ledger, platform.outbox, platform.metrics), platform.logger);
  return { ledger, custodyLedgerSync, walletBalances: new WalletBalances(ledger, deps.chains) };
}
