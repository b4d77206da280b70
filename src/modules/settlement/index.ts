/**
 * The settlement module's face: what other modules may use of it. On-chain settlement of trades: the contracts, batches, reconciliation and wallets' trading balances.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { SettlementBatchService } from './settlement-batch.service';
import type { SettlementDeployments } from './settlement-deployments';
import type { SettlementReconciler } from './settlement-reconciler';
import type { TradingDepositOutcomes } from './trading-deposit-outcomes';
import type { TradingDepositReorgs } from './trading-deposit-reorgs';
import type { TradingExit } from './trading-exit';
import type { TradingExits } from './trading-exits';
import type { TradingMigration } from './trading-migration';
import type { TradingWithdrawalSender } from './trading-withdrawal-sender';
import type { TradingService } from './trading.service';

export { createSettlementDeployments, createSettlementServices } from './settlement-services';

/** The settlement module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface SettlementServices {
  /** On-chain settlement of trades: the contracts, the batches API and reconciliation. */
  settlementDeployments: SettlementDeployments;
  settlementBatches: SettlementBatchService;
  settlementReconciler: SettlementReconciler;
  /** Wallets' trading balances in the settlement contract: deposits to and withdrawals from trading. */
  trading: TradingService;
  /** Credits a deposit to trading once its transfer line is CONFIRMED (a transaction-sender outcome listener). */
  tradingDepositOutcomes: TradingDepositOutcomes;
  /** Confirmed deposits to trading a deep reorg took off the chain: alarmed and sent again. */
  tradingDepositReorgs: TradingDepositReorgs;
  /** Pays out withdrawals from trading: the operator's side, stepped by the settlement worker. */
  tradingWithdrawals: TradingWithdrawalSender;
  /** `keel settlement migrate`: balances from the per-batch funding flow into the contract. */
  tradingMigration: TradingMigration;
  /** `keel settlement exit`: the contract's exit hatch, run for a custody customer. */
  tradingExit: TradingExit;
  /** The exits Keel's wallets asked of a contract: recorded, their orders refused and cancelled (the settlement worker watches the contract for them). */
  tradingExits: TradingExits;
}
