/**
 * The agents module's face: what other modules may use of it. Agents: their keys, wallets, spending policies and policy-checked payments.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { AgentPaymentOutcomes } from './agent-payment-outcomes';
import type { AgentPaymentService } from './agent-payment.service';
import type { AgentPolicyService } from './agent-policy.service';
import type { AgentWalletService } from './agent-wallet.service';
import type { AgentService } from './agent.service';

export { createAgentsServices } from './agents-services';

/** The agents module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface AgentsServices {
  /** Agents: their keys, wallets, spending policies and policy-checked payments. */
  agents: AgentService;
  agentWallets: AgentWalletService;
  agentPolicies: AgentPolicyService;
  agentPayments: AgentPaymentService;
  /** Moves agent payments on as the transaction sender signs, confirms or fails their lines. */
  agentPaymentOutcomes: AgentPaymentOutcomes;
}
