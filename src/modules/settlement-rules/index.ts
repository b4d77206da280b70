/**
 * The settlement-rules module's face: what other modules may use of it. Settlement rules: forwarding what arrives at a wallet or address, executed by Keel.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { SettlementTrigger } from './settlement-trigger';
import type { SettlementOutcomes } from './settlement-outcomes';
import type { SettlementRuleService } from './settlement-rule.service';

export { activeRulesByWallet } from './settlement-rule-rows';

export { createSettlementRulesServices } from './settlement-rules-services';

/** The settlement-rules module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface SettlementRulesServices {
  settlementRules: SettlementRuleService;
  /** What becomes of settlement-rule executions: told by the transaction sender and by transfer rejections. */
  settlementOutcomes: SettlementOutcomes;
  /** Matches deposits against the active rules (a deposit listener). */
  settlementTrigger: SettlementTrigger;
}
