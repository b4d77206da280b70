/**
 * The withdrawals module's face: what other modules may use of it. Transfers out of custody: the write path, approvals, gas, the transaction sender and auto-sweeps.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { AutoSweeper } from './auto-sweeper';
import type { GasTopUps } from './gas-top-up';
import type { SettlementContractGuard } from './settlement-contract-guard';
import type { TransferService } from './transfer.service';

export { AutoSweeper } from './auto-sweeper';
export { checksummedAddress } from './evm-address';
export { checkFourEyes } from './four-eyes';
export { GasTopUps } from './gas-top-up';
export { GAS_HEADROOM, GasPayerHeld } from './transfer.domain';
export { SettlementContractGuard } from './settlement-contract-guard';
export type { SettlementContracts } from './settlement-contract-guard';
export type { SendingItem, TransferOutcomeListener } from './transaction-sender';
export type { BookedInTransaction } from './transfer-item-rows';
export { checkSanctions, checkTransferPolicy } from './transfer-policy';
export type { RecipientScreen } from './transfer-policy';
export { linesMovingOn, bookedInTransactions, itemCallData, itemRecords, openItemsOnChain, setItemCallData, setItemPredecessor, transfersWaitingOn, txHashesSentAs } from './transfer-item-rows';
export { OPEN_ITEM_STATUSES } from './transfer.domain';
export { SweepsDue } from './sweeps-due';
export type { FundsLine, PreparedTransfer, QueuedLine, TransferFunds } from './transfer.domain';
export { TransferService } from './transfer.service';

export { createWithdrawalsServices } from './withdrawals-services';

/** The withdrawals module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface WithdrawalsServices {
  transfers: TransferService;
  /** Gas for the sends Keel decides on itself (auto-sweeps, settlement rules), topped up from the master wallet. */
  gasTopUps: GasTopUps;
  /** Sweeps deposits to the master wallet when a wallet's configuration asks for it (a deposit listener; checkout sweeps paid checkouts through it); the worker tries the sweeps due again (retryDue). */
  autoSweeper: AutoSweeper;
  /** Refuses Keel's settlement contract as the destination of any send a caller chose (422 VALIDATION_ERROR naming the field). */
  settlementContractGuard: SettlementContractGuard;
}
export type { TransferDecisionListener } from './transfer.domain';
