import type { Platform } from '../../platform/platform';
import type { ApiKeyService } from '../api-keys';
import type { ChainService } from '../chains';
import type { OrganizationService } from '../organizations';
import type { AddressService, MasterWalletService, WalletScreening } from '../wallets';
import type { SettlementContractGuard, TransferService } from '../withdrawals';
import type { RecipientScreen, UsdValuer } from './agent-ports';
import { AgentPaymentOutcomes } from './agent-payment-outcomes';
import { AgentPaymentService } from './agent-payment.service';
import { AgentPolicyService } from './agent-policy.service';
import { AgentWalletService } from './agent-wallet.service';
import { AgentService } from './agent.service';

/** The agents module's services (AgentsServices), built from what they use. */
export function createAgentsServices(
  platform: Pick<Platform, 'db' | 'outbox' | 'unitOfWork'>,
  deps: {
    apiKeys: ApiKeyService;
    organizations: OrganizationService;
    chains: ChainService;
    masterWallets: MasterWalletService;
    addresses: AddressService;
    walletAml: WalletScreening;
    transfers: TransferService;
    settlementContractGuard: SettlementContractGuard;
    screen: RecipientScreen;
    prices: UsdValuer;
  },
) {
  const { db, outbox, unitOfWork } = platform;
  const agents = new AgentService(db, outbox, deps.apiKeys, deps.organizations, unitOfWork);
  const agentWallets = new AgentWalletService(db, agents, deps.masterWallets, deps.addresses, deps.walletAml, unitOfWork);
  const agentPolicies = new AgentPolicyService(db, agents, unitOfWork);
  const agentPayments = new AgentPaymentService(db, outbox, agents, agentWallets, agentPolicies, deps.chains, deps.transfers, deps.settlementContractGuard, deps.screen, deps.prices, unitOfWork);
  return { agents, agentPaymentOutcomes: new AgentPaymentOutcomes(agentPayments), agentWallets, agentPolicies, agentPayments };
}
