import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import type { Host } from '../../platform/auth/permissions';
import type { MonthlyQuota } from '../../platform/quota/monthly-quota';
import { quotaMonthOf } from '../../platform/quota/quota-month';
import { MAX_MONTHLY_QUOTA } from '../../platform/quota/tier-quotas';
import { apiKeyLabels } from '../api-keys';
import { setMonthlyQuota } from '../organizations';

export interface DailyUsageView {
  /** `2026-11-27` (UTC) */
  day: string;
  requests: number;
}

export interface KeyUsageView {
  apiKeyId: string;
  /** The key's name and host; null for a key that no longer exists. */
  name: string | null;
  host: Host | null;
  requests: number;
}

export interface UsageView {
  /** `2026-11`: the current UTC calendar month. */
  month: string;
  limit: number;
  used: number;
  remaining: number;
  resetAt: Date;
  /** Whether an operator set this organisation's quota (`keel quota set`) rather than its tier. */
  limitSetByOperator: boolean;
  byDay: DailyUsageView[];
  byKey: KeyUsageView[];
}

/**
 * An organisation's month of requests against its quota, and the operator's quota per organisation.
 * `used` is the quota's count (what QUOTA_EXCEEDED is decided on); the days and keys come from the
 * PostgreSQL record, which other nodes add their counts to every QUOTA_FLUSH_INTERVAL_MS (this
 * node's are added first).
 */
export class QuotaService {
  constructor(
    private readonly db: Knex,
    private readonly quota: MonthlyQuota,
  ) {}

  async usage(organization: string): Promise<UsageView> {
    const organizationId = Ids.uuid('Organisation', organization);
    await this.quota.flush().catch(() => undefined);
    const month = quotaMonthOf(this.quota.now());
    const state = await this.quota.state(organizationId);
    const range = [organizationId, month.start.toISOString().slice(0, 10), month.end.toISOString().slice(0, 10)];
    const [byDay, byKey] = await Promise.all([
      this.db.raw(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(requests)::float8 AS requests
           FROM api_usage_daily WHERE organization_id = ? AND day >= ? AND day < ?
          GROUP BY day ORDER BY day`,
        range,
      ),
      this.db.raw(
        `SELECT api_key_id AS "apiKeyId", sum(requests)::float8 AS requests
           FROM api_usage_daily WHERE organization_id = ? AND day >= ? AND day < ?
          GROUP BY api_key_id ORDER BY requests DESC, api_key_id`,
        range,
      ),
    ]);
    const usageByKey = byKey.rows as { apiKeyId: string; requests: number }[];
    const labels = await apiKeyLabels(this.db, usageByKey.map((k) => k.apiKeyId));
    return {
      month: month.key,
      limit: state.limit,
      used: state.used,
      remaining: state.remaining,
      resetAt: month.end,
      limitSetByOperator: state.limitSetByOperator,
      byDay: byDay.rows as DailyUsageView[],
      byKey: usageByKey.map((k): KeyUsageView => {
        const label = labels.get(k.apiKeyId);
        return { apiKeyId: k.apiKeyId, name: label?.name ?? null, host: label?.host ?? null, requests: k.requests };
      }),
    };
  }

  /**
   * The operator's quota for one organisation (null: back to its tier's), in force on every node at
   * once (each reads it again from PostgreSQL on its next request), and the usage it now applies to.
   */
  async setLimit(organizationId: string, requests: number | null): Promise<UsageView> {
    const id = Ids.uuid('Organisation', organizationId);
    if (requests !== null && (!Number.isSafeInteger(requests) || requests < 1 || requests > MAX_MONTHLY_QUOTA)) {
      throw KeelError.invalidField('requests', `must be a whole number from 1 to ${MAX_MONTHLY_QUOTA}`);
    }
    if (!(await setMonthlyQuota(this.db, id, requests))) throw KeelError.notFound('Organisation');
    // Redis unreachable: each node still reads the new quota within QUOTA_LIMIT_CACHE_SECONDS.
    await this.quota.forgetLimit(id).catch(() => undefined);
    return this.usage(id);
  }
}
