import type { Platform } from '../../platform/platform';
import type { ChainNetworks, ChainService } from '../chains';
import type { SendingWallets } from '../wallets';
import { AutoSweeper } from './auto-sweeper';
import { GasTopUps } from './gas-top-up';
import type { SettlementContractGuard } from './settlement-contract-guard';
import { SweepsDue } from './sweeps-due';
import type { TransferFunds } from './transfer.domain';
import type { RecipientScreen } from './transfer-policy';
import { TransferService } from './transfer.service';

/** The withdrawals module's services (WithdrawalsServices), built from what they use; `funds` (the custody ledger) and `screen` (sanctions) are ports; `settlementContractGuard` (over Keel's settlement contracts) is built in the composition root, which gives it to wallets too. */
export function createWithdrawalsServices(
  platform: Pick<Platform, 'db' | 'unitOfWork' | 'logger' | 'config' | 'metrics'>,
  deps: { chains: ChainService; networks: ChainNetworks; sendingWallets: SendingWallets; funds: TransferFunds; screen: RecipientScreen; settlementContractGuard: SettlementContractGuard },
) {
  const { chains, networks, sendingWallets, settlementContractGuard } = deps;
  const transfers = new TransferService(platform.db, sendingWallets, chains, networks, deps.funds, platform.unitOfWork, deps.screen, settlementContractGuard);
  const gasTopUps = new GasTopUps(sendingWallets, chains, transfers);
  transfers.payGasWith(gasTopUps);
  const autoSweeper = new AutoSweeper(platform.db, new SweepsDue(platform.config.SWEEP_RETRY_BASE_MS), platform.metrics, sendingWallets, chains, networks, transfers, gasTopUps, settlementContractGuard, platform.logger);
  return { transfers, gasTopUps, autoSweeper, settlementContractGuard };
}
