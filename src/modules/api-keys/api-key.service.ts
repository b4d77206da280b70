import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { generateApiKey } from '../../platform/auth/api-key-secret';
import { AGENT_SCOPE, CORE_SCOPES, Environment, Host, operatorOnly, PRO_PERMISSIONS, Tier, TIERS } from '../../platform/auth/permissions';
import type { Authenticator } from '../../platform/auth/authenticator';
import type { RedisClient } from '../../platform/redis';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import type { OrganizationService } from '../organizations';
import { ApiKeyModel } from './api-key.model';
import { totalFromPage } from '../../platform/db/fetch-page';
import { PreparedStatement } from '../../platform/db/prepared-statement';
import { dateRangeLimits } from '../../platform/db/date-range';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { ApiKeyStatus } from './api-key.domain';

/** An organisation's keys within a date range on their creation ($1 organisation, $2 from, $3 to: null for unbounded). */
const KEYS_IN_RANGE = `FROM api_keys WHERE organization_id = $1 AND created_at >= COALESCE($2::timestamptz, '-infinity') AND created_at < COALESCE($3::timestamptz, 'infinity')`;
const LIST_KEYS = new PreparedStatement<ApiKeyRecord>(
  'api_keys.list',
  `SELECT id, organization_id AS "organizationId", name, host, environment, scopes, tier, prefix, last_rotated_at AS "lastRotatedAt",
     revoked_at AS "revokedAt", agent_id AS "agentId", created_at AS "createdAt", updated_at AS "updatedAt"
   ${KEYS_IN_RANGE} ORDER BY created_at DESC, id LIMIT $4 OFFSET $5`,
);
const COUNT_KEYS = new PreparedStatement<{ count: string }>('api_keys.count', `SELECT count(*) AS count ${KEYS_IN_RANGE}`);

/** A key's columns, as the model or as a plain row read without it. */
export type ApiKeyRecord = Pick<
  ApiKeyModel,
  'id' | 'organizationId' | 'name' | 'host' | 'environment' | 'scopes' | 'tier' | 'prefix' | 'lastRotatedAt' | 'revokedAt' | 'agentId' | 'createdAt' | 'updatedAt'
>;

/** A key as the API shows it: its columns and its status, never its secret. */
export interface ApiKeyView {
  id: string;
  organizationId: string;
  name: string;
  host: Host;
  environment: Environment;
  scopes: string[];
  tier: Tier;
  prefix: string;
  status: ApiKeyStatus;
  lastRotatedAt: Date | null;
  revokedAt: Date | null;
  agentId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A key with its secret: returned once, by create and rotate. */
export interface ApiKeyWithSecretView extends ApiKeyView {
  secret: string;
  /** After a rotation: when the previous secret stops working. */
  previousSecretExpiresAt: Date | null;
}

export interface IssuedKey {
  key: ApiKeyView;
  secret: string;
  previousSecretExpiresAt: Date | null;
}

/** What a tenant asks for when creating a key; the tier defaults to the organisation's. */
export interface CreateApiKey {
  name: string;
  host: Host;
  scopes: string[];
  tier?: Tier;
}

/** The key and its secret as one view (the shape of the create and rotate responses). */
export function withSecret(issued: IssuedKey): ApiKeyWithSecretView {
  return Object.assign(issued.key, { secret: issued.secret, previousSecretExpiresAt: issued.previousSecretExpiresAt });
}

export interface IssueInput {
  organizationId: string;
  name: string;
  host: Host;
  scopes: string[];
  tier: Tier;
  /** Issues an agent's key: linked to the agent, with the one scope 'agent'. */
  agentId?: string;
}

/** 403 naming the operator permission a tenant's key was to be given. */
function operatorPermissionRefused(permissions: string[]): KeelError {
  return KeelError.forbidden(`Only the operator's keys may hold ${permissions.map((p) => `'${p}'`).join(', ')}; markets are managed with \`keel market\` or an operator key`);
}

function view(key: ApiKeyRecord): ApiKeyView {
  const status: ApiKeyStatus = key.revokedAt ? 'REVOKED' : 'ACTIVE';
  return Object.assign(key, { status });
}

/** Key administration: issue, list, rotate with a grace period, revoke at once. */
export class ApiKeyService {
  constructor(
    private readonly db: Knex,
    private readonly environment: Environment,
    private readonly rotationGraceSeconds: number,
    private readonly authenticator: Authenticator,
    private readonly redis: RedisClient,
    private readonly organizations: OrganizationService,
    private readonly uow: UnitOfWork,
  ) {}

  async issue(input: IssueInput, trx?: Knex.Transaction): Promise<IssuedKey> {
    const reserved = operatorOnly(input.scopes);
    if (reserved.length && !(await this.organizations.get(input.organizationId, trx)).isOperator) throw operatorPermissionRefused(reserved);
    const allowed: readonly string[] = input.agentId ? [AGENT_SCOPE] : input.host === 'core' ? CORE_SCOPES : PRO_PERMISSIONS;
    const unknown = input.scopes.filter((s) => !allowed.includes(s));
    if (unknown.length) {
      throw KeelError.invalidField('scopes', `unknown ${input.host === 'core' ? 'scope' : 'permission'}: ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
    }
    const generated = generateApiKey(input.host, this.environment);
    const run = async (t: Knex.Transaction) => {
      const key = await ApiKeyModel.query(t).insertAndFetch({
        organizationId: input.organizationId,
        name: input.name,
        host: input.host,
        environment: this.environment,
        scopes: [...new Set(input.scopes)],
        tier: input.tier,
        prefix: generated.prefix,
        agentId: input.agentId ?? null,
      });
      await t('api_key_secrets').insert({ secretHash: generated.hash, apiKeyId: key.id });
      return { key: view(key), secret: generated.secret, previousSecretExpiresAt: null };
    };
    return trx ? run(trx) : this.uow.run('api-key.create', run);
  }

  async create(organizationId: string, input: CreateApiKey): Promise<IssuedKey> {
    const org = await this.organizations.get(organizationId);
    if (input.host === 'pro' && !org.proAccess) {
      throw KeelError.forbidden('Order-book access is granted by the operator on request; this organisation does not have it');
    }
    if (input.tier && TIERS.indexOf(input.tier) > TIERS.indexOf(org.tier)) {
      throw KeelError.invalidField('tier', `must not exceed the organisation's tier (${org.tier})`);
    }
    return this.issue({ organizationId, name: input.name, host: input.host, scopes: input.scopes, tier: input.tier ?? org.tier });
  }

  async list(organizationId: string, page: PageWindow): Promise<PageResult<ApiKeyView>> {
    // A hot read: SQL written once, plain rows, no query building.
    const { from, to } = dateRangeLimits(page);
    const rows = await LIST_KEYS.rows(this.db, [organizationId, from, to, page.limit, page.offset]);
    const total = totalFromPage(rows.length, page) ?? Number((await COUNT_KEYS.rows(this.db, [organizationId, from, to]))[0].count);
    return toPage(rows.map(view), total, page);
  }

  async get(organizationId: string, id: string): Promise<ApiKeyView> {
    id = Ids.uuid('id', id);
    const key = await this.find(this.db, organizationId, id);
    return view(key);
  }

  /** A new secret; the previous ones keep working until the grace period ends; the key's access tokens end now. */
  async rotate(organizationId: string, id: string, gracePeriodSeconds?: number): Promise<IssuedKey> {
    id = Ids.uuid('id', id);
    const grace = gracePeriodSeconds ?? this.rotationGraceSeconds;
    const result = await this.uow.run('api-key.rotate', async (trx) => {
      const key = await this.find(trx, organizationId, id, true);
      if (key.revokedAt) throw new KeelError('CONFLICT', 'A revoked key cannot be rotated');
      const reserved = operatorOnly(key.scopes);
      if (reserved.length && !(await this.organizations.get(organizationId, trx)).isOperator) throw operatorPermissionRefused(reserved);
      const generated = generateApiKey(key.host, key.environment);
      const expiresAt = new Date(Date.now() + grace * 1000);
      await trx('api_key_secrets').where({ apiKeyId: id }).where((q) => q.whereNull('expiresAt').orWhere('expiresAt', '>', expiresAt)).update({ expiresAt });
      await trx('api_key_secrets').insert({ secretHash: generated.hash, apiKeyId: id });
      const updated = await ApiKeyModel.query(trx).patchAndFetchById(id, { prefix: generated.prefix, generation: key.generation + 1, lastRotatedAt: new Date(), updatedAt: new Date() });
      return { key: view(updated), secret: generated.secret, previousSecretExpiresAt: expiresAt };
    });
    await this.authenticator.announce(this.redis, id);
    return result;
  }

  async revoke(organizationId: string, id: string): Promise<ApiKeyView> {
    id = Ids.uuid('id', id);
    const key = await this.uow.run('api-key.revoke', async (trx) => {
      const found = await this.find(trx, organizationId, id, true);
      if (found.revokedAt) return found;
      return ApiKeyModel.query(trx).patchAndFetchById(id, { revokedAt: new Date(), updatedAt: new Date() });
    });
    await this.authenticator.announce(this.redis, id);
    return view(key);
  }

  /** Revokes every live key of an agent inside the caller's transaction; returns their ids for `announce`. */
  async revokeAgentKeys(trx: Knex.Transaction, organizationId: string, agentId: string): Promise<string[]> {
    const rows: { id: string }[] = await trx('api_keys').where({ organizationId, agentId }).whereNull('revokedAt').update({ revokedAt: trx.fn.now(), updatedAt: trx.fn.now() }).returning('id');
    return rows.map((r) => r.id);
  }

  /** Tells every node to drop these keys now (after the transaction that revoked them committed). */
  async announce(keyIds: string[]): Promise<void> {
    for (const id of keyIds) await this.authenticator.announce(this.redis, id);
  }

  private async find(db: Knex | Knex.Transaction, organizationId: string, id: string, forUpdate = false): Promise<ApiKeyModel> {
    const q = ApiKeyModel.query(db).findOne({ id, organizationId });
    const key = await (forUpdate ? q.forUpdate() : q);
    if (!key) throw KeelError.notFound('API key');
    return key;
  }
}
