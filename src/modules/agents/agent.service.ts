import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { Outbox } from '../../platform/events/outbox';
import { AGENT_SCOPE, Tier } from '../../platform/auth/permissions';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { newestAgentKeyPrefix, type ApiKeyService } from '../api-keys';
import type { OrganizationService } from '../organizations';
import type { AgentStatus } from './agent.domain';

/**
 * Who asks: the organisation, and the agent when the caller is an agent's own key. An agent's key
 * sees only its own agent and what hangs from it; any other agent id is a 404, as a foreign one is.
 * (The request's Principal has this shape.)
 */
export interface AgentCaller {
  organizationId: string;
  agentId: string | null;
}


export interface CreateAgent {
  name: string;
  description?: string;
  metadata?: Record<string, unknown>;
}

export interface UpdateAgent {
  name?: string;
  description?: string;
  metadata?: Record<string, unknown>;
}

export interface AgentFilter extends PageWindow {
  status?: AgentStatus;
}

export interface AgentView {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  status: AgentStatus;
  /** The leading characters of the agent's key: never the key. */
  apiKeyPrefix: string | null;
  metadata: Record<string, unknown>;
  /** The agent's key itself: in the create and resume responses only. */
  apiKey: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AgentRow {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  status: AgentStatus;
  metadata: Record<string, unknown>;
  apiKeyPrefix: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const AGENT = 'Agent';

/** Agents: autonomous callers of an organisation, each with its own narrow API key. */
export class AgentService {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly apiKeys: ApiKeyService,
    private readonly organizations: OrganizationService,
    private readonly uow: UnitOfWork,
  ) {}

  /** Creates the agent and its key (scope 'agent'); the key is in this response and never again. */
  async create(organizationId: string, input: CreateAgent): Promise<AgentView> {
    const org = await this.organizations.get(organizationId);
    return this.uow.run('agent.create', async (trx) => {
      const [row] = await trx('agents')
        .insert({ organizationId, name: input.name, description: input.description ?? null, metadata: JSON.stringify(input.metadata ?? {}) })
        .returning('id');
      const issued = await this.issueKey(trx, organizationId, row.id, input.name, org.tier);
      const agent = await this.row(trx, { organizationId, agentId: null }, row.id);
      await this.publish(trx, 'agent.created', agent);
      return view(agent, issued);
    });
  }

  async list(caller: AgentCaller, args: AgentFilter): Promise<PageResult<AgentView>> {
    const q = this.rows(this.db, caller.organizationId).modify((b) => {
      if (caller.agentId) b.where('a.id', caller.agentId);
      if (args.status) b.where('a.status', args.status);
    });
    const { rows, total } = await fetchPage<AgentRow>(q, args, [{ column: 'a.createdAt', order: 'desc' }, { column: 'a.id', order: 'desc' }]);
    return toPage(rows.map((r) => view(r)), total, args);
  }

  async get(caller: AgentCaller, id: string): Promise<AgentView> {
    return view(await this.row(this.db, caller, id));
  }

  async update(organizationId: string, id: string, input: UpdateAgent): Promise<AgentView> {
    return this.change('agent.update', organizationId, id, 'agent.updated', () => {
      const patch: Record<string, unknown> = {};
      if (input.name !== undefined) patch.name = input.name;
      if (input.description !== undefined) patch.description = input.description;
      if (input.metadata !== undefined) patch.metadata = JSON.stringify(input.metadata);
      return patch;
    });
  }

  /** Suspends the agent: its key is revoked at once (every node drops it), its payments refused. */
  async suspend(organizationId: string, id: string): Promise<AgentView> {
    let revoked: string[] = [];
    const result = await this.uow.run('agent.suspend', async (trx) => {
      const agent = await this.row(trx, { organizationId, agentId: null }, id, true);
      if (agent.status === 'SUSPENDED') return view(agent);
      await trx('agents').where({ id: agent.id }).update({ status: 'SUSPENDED', updatedAt: trx.fn.now() });
      revoked = await this.apiKeys.revokeAgentKeys(trx, organizationId, agent.id);
      const updated = await this.row(trx, { organizationId, agentId: null }, agent.id);
      await this.publish(trx, 'agent.suspended', updated);
      return view(updated);
    });
    await this.apiKeys.announce(revoked);
    return result;
  }

  /** Reactivates a suspended agent with a new key, returned in this response only. */
  async resume(organizationId: string, id: string): Promise<AgentView> {
    const org = await this.organizations.get(organizationId);
    return this.uow.run('agent.resume', async (trx) => {
      const agent = await this.row(trx, { organizationId, agentId: null }, id, true);
      if (agent.status !== 'SUSPENDED') throw new KeelError('CONFLICT', 'The agent is not suspended');
      await trx('agents').where({ id: agent.id }).update({ status: 'ACTIVE', updatedAt: trx.fn.now() });
      const issued = await this.issueKey(trx, organizationId, agent.id, agent.name, org.tier);
      const updated = await this.row(trx, { organizationId, agentId: null }, agent.id);
      await this.publish(trx, 'agent.resumed', updated);
      return view(updated, issued);
    });
  }

  /**
   * Deletes the agent: its key is revoked, its wallets deactivated (the addresses and their funds
   * stay with the master wallet), and it is gone from the API; its payments stay on record.
   */
  async delete(organizationId: string, id: string): Promise<AgentView> {
    let revoked: string[] = [];
    const result = await this.uow.run('agent.delete', async (trx) => {
      const agent = await this.row(trx, { organizationId, agentId: null }, id, true);
      revoked = await this.apiKeys.revokeAgentKeys(trx, organizationId, agent.id);
      await trx('agents').where({ id: agent.id }).update({ deletedAt: trx.fn.now(), updatedAt: trx.fn.now() });
      await trx('agent_wallets').where({ agentId: agent.id }).update({ isActive: false, updatedAt: trx.fn.now() });
      await this.publish(trx, 'agent.deleted', agent);
      return view(agent);
    });
    await this.apiKeys.announce(revoked);
    return result;
  }

  /** The agent as the caller may see it (404 otherwise); `forUpdate` locks its row (payments against its limits queue behind it). */
  async row(db: Knex | Knex.Transaction, caller: AgentCaller, id: string, forUpdate = false): Promise<AgentRow> {
    id = Ids.uuid(AGENT, id);
    if (caller.agentId && caller.agentId !== id) throw KeelError.notFound(AGENT);
    if (forUpdate) await db('agents').where({ id, organizationId: caller.organizationId }).whereNull('deletedAt').forUpdate().first('id');
    const row = await this.rows(db, caller.organizationId).where('a.id', id).first();
    if (!row) throw KeelError.notFound(AGENT);
    return row;
  }

  /** Publishes an agent event (an agent's wallets and policy publish theirs through here too). */
  async publish(trx: Knex.Transaction, type: string, agent: AgentRow, extra: Record<string, unknown> = {}): Promise<void> {
    await this.outbox.publish(trx, { organizationId: agent.organizationId, type, data: { ...eventData(agent), ...extra } });
  }

  private rows(db: Knex | Knex.Transaction, organizationId: string): Knex.QueryBuilder {
    const prefix = newestAgentKeyPrefix(db, 'a.id');
    return db('agents as a')
      .where({ 'a.organizationId': organizationId })
      .whereNull('a.deletedAt')
      .select('a.id', 'a.organizationId', 'a.name', 'a.description', 'a.status', 'a.metadata', 'a.createdAt', 'a.updatedAt', prefix.as('apiKeyPrefix'));
  }

  private async change(work: string, organizationId: string, id: string, event: string, patch: () => Record<string, unknown>): Promise<AgentView> {
    return this.uow.run(work, async (trx) => {
      const agent = await this.row(trx, { organizationId, agentId: null }, id, true);
      await trx('agents').where({ id: agent.id }).update({ ...patch(), updatedAt: trx.fn.now() });
      const updated = await this.row(trx, { organizationId, agentId: null }, agent.id);
      await this.publish(trx, event, updated);
      return view(updated);
    });
  }

  private async issueKey(trx: Knex.Transaction, organizationId: string, agentId: string, name: string, tier: Tier): Promise<string> {
    const issued = await this.apiKeys.issue({ organizationId, name: `agent: ${name}`.slice(0, 200), host: 'core', scopes: [AGENT_SCOPE], tier, agentId }, trx);
    return issued.secret;
  }
}

function view(row: AgentRow, apiKey: string | null = null): AgentView {
  return { ...row, description: row.description ?? null, apiKeyPrefix: row.apiKeyPrefix ?? null, apiKey };
}

function eventData(agent: AgentRow): Record<string, unknown> {
  return { agentId: agent.id, name: agent.name, status: agent.status, apiKeyPrefix: agent.apiKeyPrefix, metadata: agent.metadata };
}
