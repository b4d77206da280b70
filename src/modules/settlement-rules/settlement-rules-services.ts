import type { Platform } from '../../platform/platform';
import type { ChainNetworks, ChainService } from '../chains';
import type { AddressService, MasterWalletService, SendingWallets } from '../wallets';
import type { SettlementContractGuard } from '../withdrawals';
import { SettlementOutcomes } from './settlement-outcomes';
import { SettlementRuleService } from './settlement-rule.service';
import { SettlementTrigger } from './settlement-trigger';

/** The settlement-rules module's services (SettlementRulesServices), built from what they use. */
export function createSettlementRulesServices(platform: Pick<Platform, 'db' | 'config' | 'outbox' | 'unitOfWork' | 'logger'>, deps: { chains: ChainService; networks: ChainNetworks; sendingWallets: SendingWallets; masterWallets: MasterWalletService; addresses: AddressService; settlementContractGuard: SettlementContractGuard }) {
  const { db, config, outbox } = platform;
  const { chains, sendingWallets } = deps;
  return {
    settlementOutcomes: new SettlementOutcomes(chains, sendingWallets, outbox, { baseBackoffMs: config.SETTLEMENT_RULES_RETRY_BASE_MS, maxBackoffMs: 600_000, maxAttempts: config.SETTLEMENT_RULES_MAX_ATTEMPTS }, platform.logger),
    settlementRules: new SettlementRuleService(db, sendingWallets, deps.masterWallets, deps.addresses, chains, deps.networks, deps.settlementContractGuard, outbox, platform.unitOfWork),
    settlementTrigger: new SettlementTrigger(),
  };
}
