/**
 * The ledger module's face: what other modules may use of it. The internal ledger: accounts, moves, wallet balances, and custody kept in step with the chain.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { CustodyLedgerSync } from './custody-ledger-sync';
import type { LedgerService } from './ledger.service';
import type { WalletBalances } from './wallet-balances';

export { CustodyLedgerSync } from './custody-ledger-sync';
export type { SettlementView } from './custody-ledger-sync';
export { balanceTotals, walletDebtsOf } from './ledger-rows';
export { LedgerService } from './ledger.service';
export type { LedgerAccount, LedgerMove } from './ledger.service';
export { WalletBalances } from './wallet-balances';
export type { WalletBalance } from './wallet-balances';

export { createLedgerServices } from './ledger-services';

/** The ledger module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface LedgerServices {
  ledger: LedgerService;
  /** Credits deposits to the ledger and debits transfers out; the transaction sender reports failures to it. */
  custodyLedgerSync: CustodyLedgerSync;
  walletBalances: WalletBalances;
}
