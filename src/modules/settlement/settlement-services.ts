import type { Platform } from '../../platform/platform';
import type { ChainNetworks, ChainService } from '../chains';
import type { CustodyLedgerSync, LedgerService } from '../ledger';
import type { MarketService } from '../markets';
import type { OrderService } from '../orders';
import type { SendingWallets } from '../wallets';
import type { GasTopUps, RecipientScreen, SettlementContractGuard, TransferService } from '../withdrawals';
import { SettlementBatchService } from './settlement-batch.service';
import { SettlementDeployments } from './settlement-deployments';
import { SettlementLedgerView } from './settlement-ledger-view';
import { SettlementReconciler } from './settlement-reconciler';
import { TradingDepositOutcomes } from './trading-deposit-outcomes';
import { TradingDepositReorgs } from './trading-deposit-reorgs';
import { TradingExit } from './trading-exit';
import { TradingExits } from './trading-exits';
import { TradingMigration } from './trading-migration';
import { TradingWithdrawalSender } from './trading-withdrawal-sender';
import { TradingService } from './trading.service';

/**
 * Where Keel's settlement contracts are, built before the modules below settlement that must know
 * them (the withdrawals module's SettlementContracts port: nothing is sent to one) and handed back to createSettlementServices.
 */
export function createSettlementDeployments(platform: Pick<Platform, 'db' | 'config' | 'logger'>): SettlementDeployments {
  return new SettlementDeployments(platform.db, platform.config, platform.logger);
}

/**
 * The settlement module's services (SettlementServices), built from what they use; the custody ledger learns of settlement through them
 * (SettlementLedgerView), and the order book which wallets asked to exit a contract (TradingExits: their placements refused).
 */
export function createSettlementServices(
  platform: Platform,
  deps: {
    settlementDeployments: SettlementDeployments;
    chains: ChainService;
    networks: ChainNetworks;
    sendingWallets: SendingWallets;
    transfers: TransferService;
    gasTopUps: GasTopUps;
    ledger: LedgerService;
    custodyLedgerSync: CustodyLedgerSync;
    screen: RecipientScreen;
    settlementContractGuard: SettlementContractGuard;
    markets: MarketService;
    orders: OrderService;
  },
) {
  const { db, config, outbox, logger } = platform;
  const { chains, sendingWallets, ledger, settlementDeployments } = deps;
  deps.custodyLedgerSync.settleThrough(new SettlementLedgerView(settlementDeployments));
  const tradingExits = new TradingExits(db, settlementDeployments, deps.orders, logger, { reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS });
  deps.orders.refuseExitsOf(tradingExits);
  const trading = new TradingService(db, sendingWallets, chains, deps.networks, deps.transfers, deps.gasTopUps, ledger, settlementDeployments, tradingExits, deps.screen, deps.settlementContractGuard, outbox, platform.unitOfWork);
  return {
    settlementDeployments,
    settlementBatches: new SettlementBatchService(db, deps.markets, chains),
    settlementReconciler: new SettlementReconciler(db, settlementDeployments, outbox),
    trading,
    tradingMigration: new TradingMigration(db, settlementDeployments, trading, sendingWallets, logger),
    tradingExit: new TradingExit(db, settlementDeployments, trading, sendingWallets, ledger, deps.custodyLedgerSync, tradingExits),
    tradingExits,
    tradingDepositOutcomes: new TradingDepositOutcomes(ledger, deps.custodyLedgerSync, outbox),
    tradingDepositReorgs: new TradingDepositReorgs(db, outbox, platform.metrics, logger, { reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS }),
    tradingWithdrawals: new TradingWithdrawalSender(db, sendingWallets, ledger, deps.custodyLedgerSync, outbox, platform.failpoints, logger, {
      bumpAfterMs: config.SETTLEMENT_FEE_BUMP_AFTER_MS,
      bumpPercent: config.TRANSFER_FEE_BUMP_PERCENT,
      reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS,
    }),
  };
}
