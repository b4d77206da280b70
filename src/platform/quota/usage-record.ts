import type { Knex } from 'knex';

/** An organisation's total for a month after a flush (`month` as `2026-11`). */
export interface MonthTotal {
  organizationId: string;
  month: string;
  requests: number;
}

interface Pending {
  organizationId: string;
  day: string;
  apiKeyId: string;
  requests: number;
}

/**
 * The requests this node served, per (organisation, UTC day, API key), counted in memory and added
 * to PostgreSQL by `flush`: the per-day rows and each month's total in one transaction. Rows are
 * written in one sorted order, so two nodes flushing the same rows wait for each other instead of
 * deadlocking. A failed flush puts its counts back for the next one (a flush whose commit succeeded
 * but whose answer was lost would then count them twice: the one way the record errs high).
 */
export class UsageRecord {
  private pending = new Map<string, Pending>();

  constructor(private readonly db: Knex) {}

  count(organizationId: string, day: string, apiKeyId: string, requests = 1): void {
    const id = `${organizationId}|${day}|${apiKeyId}`;
    const entry = this.pending.get(id);
    if (entry) entry.requests += requests;
    else this.pending.set(id, { organizationId, day, apiKeyId, requests });
  }

  /** Adds the counts so far to PostgreSQL; returns the new monthly totals of the organisations flushed. */
  async flush(): Promise<MonthTotal[]> {
    if (this.pending.size === 0) return [];
    const taken = this.pending;
    this.pending = new Map();
    try {
      return await this.write([...taken.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, p]) => p));
    } catch (error) {
      for (const p of taken.values()) this.count(p.organizationId, p.day, p.apiKeyId, p.requests);
      throw error;
    }
  }

  private async write(rows: Pending[]): Promise<MonthTotal[]> {
    const months = new Map<string, { organizationId: string; month: string; requests: number }>();
    for (const r of rows) {
      const id = `${r.organizationId}|${r.day.slice(0, 7)}`;
      const m = months.get(id) ?? months.set(id, { organizationId: r.organizationId, month: `${r.day.slice(0, 7)}-01`, requests: 0 }).get(id)!;
      m.requests += r.requests;
    }
    const monthly = [...months.values()];
    return this.db.transaction(async (trx) => {
      // An organisation deleted since its requests were counted takes its counts with it.
      await trx.raw(
        `INSERT INTO api_usage_daily AS u (organization_id, day, api_key_id, requests)
         SELECT d.organization_id, d.day, d.api_key_id, d.requests
           FROM unnest(?::uuid[], ?::date[], ?::uuid[], ?::bigint[]) WITH ORDINALITY AS d(organization_id, day, api_key_id, requests, n)
          WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = d.organization_id)
          ORDER BY d.n
         ON CONFLICT (organization_id, day, api_key_id) DO UPDATE SET requests = u.requests + EXCLUDED.requests`,
        [rows.map((r) => r.organizationId), rows.map((r) => r.day), rows.map((r) => r.apiKeyId), rows.map((r) => r.requests)],
      );
      const { rows: totals } = await trx.raw(
        `INSERT INTO api_usage_monthly AS m (organization_id, month, requests)
         SELECT d.organization_id, d.month, d.requests
           FROM unnest(?::uuid[], ?::date[], ?::bigint[]) WITH ORDINALITY AS d(organization_id, month, requests, n)
          WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = d.organization_id)
          ORDER BY d.n
         ON CONFLICT (organization_id, month) DO UPDATE SET requests = m.requests + EXCLUDED.requests
         RETURNING organization_id AS "organizationId", to_char(month, 'YYYY-MM') AS month, requests::float8 AS requests`,
        [monthly.map((m) => m.organizationId), monthly.map((m) => m.month), monthly.map((m) => m.requests)],
      );
      return totals as MonthTotal[];
    });
  }
}
