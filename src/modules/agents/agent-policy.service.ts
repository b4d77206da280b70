import { Knex } from 'knex';
import { KeelError, FieldError } from '../../platform/errors';
import { NON_NEGATIVE_DECIMAL_STRING } from '../../platform/decimal';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { checksumOrNull } from '../wallets';
import type { AgentCaller, AgentService } from './agent.service';
import type { PolicyRules } from './policy-engine';

/** The rolling window when a policy names none: one day. */
export const DEFAULT_WINDOW_SECONDS = 86_400;

/** An asset's limits as an administrator sets them; absent: no such limit. */
export interface AssetLimitInput {
  assetId: string;
  maxPerPayment?: string | null;
  maxPerWindow?: string | null;
  approvalAbove?: string | null;
}

/** A policy as an administrator sets it: every field optional; what is left out takes the deny-by-default value. */
export interface PolicyInput {
  allowedBlockchainIds?: string[];
  allowedAssetIds?: string[];
  allowAnyRecipient?: boolean;
  allowedRecipients?: string[];
  deniedRecipients?: string[];
  assetLimits?: AssetLimitInput[];
  maxPerPaymentUsd?: string | null;
  maxPerWindowUsd?: string | null;
  approvalAboveUsd?: string | null;
  windowSeconds?: number;
}

export interface AgentPolicyView extends PolicyRules {
  id: string;
  agentId: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** One audited change of a policy: who, when, from what to what. */
export interface PolicyChangeView {
  id: string;
  agentId: string;
  policyId: string;
  version: number;
  changedBy: string | null;
  previousRules: PolicyRules | null;
  rules: PolicyRules;
  createdAt: Date;
}

export interface PolicyRow {
  id: string;
  agentId: string;
  version: number;
  rules: PolicyRules;
  createdAt: Date;
  updatedAt: Date;
}

/** Agent spending policies: admin-only changes, each an audit row and an event. */
export class AgentPolicyService {
  constructor(
    private readonly db: Knex,
    private readonly agents: AgentService,
    private readonly uow: UnitOfWork,
  ) {}

  /** The agent's policy, or null when it has none (then every payment is denied). */
  async get(caller: AgentCaller, agentId: string): Promise<AgentPolicyView | null> {
    const agent = await this.agents.row(this.db, caller, agentId);
    const row = await this.current(this.db, agent.id);
    return row ? policyView(row) : null;
  }

  /** Replaces the agent's policy (admin only): version + 1, an audit row naming the key that changed it, and agent.policy_updated. */
  async set(organizationId: string, changedBy: string, agentId: string, input: PolicyInput): Promise<AgentPolicyView> {
    const rules = normalise(input);
    return this.uow.run('agent.policy-set', async (trx) => {
      const agent = await this.agents.row(trx, { organizationId, agentId: null }, agentId, true);
      const before = await this.current(trx, agent.id);
      const [row] = before
        ? await trx('agent_policies').where({ id: before.id }).update({ rules: JSON.stringify(rules), version: before.version + 1, updatedAt: trx.fn.now() }).returning('*')
        : await trx('agent_policies').insert({ organizationId, agentId: agent.id, rules: JSON.stringify(rules) }).returning('*');
      await trx('agent_policy_changes').insert({
        organizationId,
        agentId: agent.id,
        policyId: row.id,
        version: row.version,
        changedBy,
        previousRules: before ? JSON.stringify(before.rules) : null,
        rules: JSON.stringify(rules),
      });
      const policy = policyView(row);
      await this.agents.publish(trx, 'agent.policy_updated', agent, { policy });
      return policy;
    });
  }

  /** The audit trail of the agent's policy, newest first. */
  async changes(caller: AgentCaller, agentId: string, page: PageWindow): Promise<PageResult<PolicyChangeView>> {
    const agent = await this.agents.row(this.db, caller, agentId);
    const q = this.db('agent_policy_changes').where({ organizationId: caller.organizationId, agentId: agent.id });
    const { rows, total } = await fetchPage<PolicyChangeView>(q, page, [{ column: 'createdAt', order: 'desc' }, { column: 'version', order: 'desc' }]);
    return toPage(rows, total, page);
  }

  async current(db: Knex | Knex.Transaction, agentId: string): Promise<PolicyRow | undefined> {
    return db('agent_policies').where({ agentId }).first();
  }
}

function policyView(row: PolicyRow): AgentPolicyView {
  return { id: row.id, agentId: row.agentId, version: row.version, createdAt: row.createdAt, updatedAt: row.updatedAt, ...row.rules };
}

/** Validates a policy (422 naming each field at fault) and fills in the deny-by-default values. */
function normalise(input: PolicyInput): PolicyRules {
  const faults: FieldError[] = [];
  const ids = (field: string, values: string[] | undefined) =>
    (values ?? []).map((v, i) => {
      if (!Ids.isUuid(v)) faults.push({ field: `${field}.${i}`, error: 'must be a UUID' });
      return v.toLowerCase();
    });
  const addresses = (field: string, values: string[] | undefined) =>
    (values ?? []).map((v, i) => {
      const a = checksumOrNull(v);
      if (!a) faults.push({ field: `${field}.${i}`, error: 'must be an EVM address (a mixed-case one with a valid checksum)' });
      return a ?? v;
    });
  const decimal = (field: string, value: string | null | undefined) => {
    if (value === undefined || value === null || value === '') return null;
    if (!NON_NEGATIVE_DECIMAL_STRING.test(value)) faults.push({ field, error: 'must be a non-negative decimal string such as "100.5"' });
    return value;
  };
  const assetLimits = (input.assetLimits ?? []).map((l, i) => ({
    assetId: ids(`assetLimits.${i}.assetId`, [l.assetId])[0],
    maxPerPayment: decimal(`assetLimits.${i}.maxPerPayment`, l.maxPerPayment),
    maxPerWindow: decimal(`assetLimits.${i}.maxPerWindow`, l.maxPerWindow),
    approvalAbove: decimal(`assetLimits.${i}.approvalAbove`, l.approvalAbove),
  }));
  const seen = new Set<string>();
  assetLimits.forEach((l, i) => {
    if (seen.has(l.assetId)) faults.push({ field: `assetLimits.${i}.assetId`, error: 'each asset may have one entry' });
    seen.add(l.assetId);
  });
  const rules: PolicyRules = {
    allowedBlockchainIds: [...new Set(ids('allowedBlockchainIds', input.allowedBlockchainIds))],
    allowedAssetIds: [...new Set(ids('allowedAssetIds', input.allowedAssetIds))],
    allowAnyRecipient: input.allowAnyRecipient ?? false,
    allowedRecipients: [...new Set(addresses('allowedRecipients', input.allowedRecipients))],
    deniedRecipients: [...new Set(addresses('deniedRecipients', input.deniedRecipients))],
    assetLimits,
    maxPerPaymentUsd: decimal('maxPerPaymentUsd', input.maxPerPaymentUsd),
    maxPerWindowUsd: decimal('maxPerWindowUsd', input.maxPerWindowUsd),
    approvalAboveUsd: decimal('approvalAboveUsd', input.approvalAboveUsd),
    windowSeconds: input.windowSeconds ?? DEFAULT_WINDOW_SECONDS,
  };
  if (faults.length) throw KeelError.validation(faults);
  return rules;
}
