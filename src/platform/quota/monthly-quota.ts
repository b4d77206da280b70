import type { Knex } from 'knex';
import { KeelError } from '../errors';
import type { Tier } from '../auth/permissions';
import type { RedisClient } from '../redis';
import { RedisScript } from '../redis-script';
import { withinMs } from '../time-bound';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import { QuotaMonth, quotaMonthOf, usageDayOf } from './quota-month';
import { MonthTotal, UsageRecord } from './usage-record';

/** An organisation's month as the quota headers and QUOTA_EXCEEDED report it. */
export interface QuotaState {
  limit: number;
  used: number;
  remaining: number;
  /** UTC epoch seconds of the next month's start, when the quota resets. */
  reset: number;
}

/**
 * Spends ARGV[1] requests if the month's count leaves room for all of them. KEYS: the month's count,
 * the organisation's limit. Returns {count, limit, spent 0|1}, or {-1} when either key is missing (a
 * new month, an expired limit, or a Redis that lost its data): the caller seeds both from PostgreSQL.
 */
const SPEND = new RedisScript(`local limit = redis.call('get', KEYS[2])
local used = redis.call('get', KEYS[1])
if not limit or not used then return {-1} end
limit = tonumber(limit)
used = tonumber(used)
local requests = tonumber(ARGV[1])
if used + requests > limit then return {used, limit, 0} end
return {redis.call('incrby', KEYS[1], requests), limit, 1}`);

/**
 * SPEND after seeding: the count is set to PostgreSQL's total unless it is there and not lower (another
 * node seeded it first, or it counted requests not flushed yet), the limit is set. ARGV: the total,
 * the count's time-to-live, the limit, the limit's time-to-live, the requests to spend.
 */
const SEED_AND_SPEND = new RedisScript(`local recorded = tonumber(ARGV[1])
local used = tonumber(redis.call('get', KEYS[1]) or '-1')
if used < recorded then
  redis.call('set', KEYS[1], recorded, 'EX', ARGV[2])
  used = recorded
end
redis.call('set', KEYS[2], ARGV[3], 'EX', ARGV[4])
local limit = tonumber(ARGV[3])
local requests = tonumber(ARGV[5])
if used + requests > limit then return {used, limit, 0} end
return {redis.call('incrby', KEYS[1], requests), limit, 1}`);

/** Raises each existing count (KEYS[i]) to at least PostgreSQL's total (ARGV[i]); a missing one is seeded on its next request. */
const RAISE = new RedisScript(`for i = 1, #KEYS do
  local used = redis.call('get', KEYS[i])
  if used and tonumber(used) < tonumber(ARGV[i]) then redis.call('set', KEYS[i], ARGV[i], 'KEEPTTL') end
end
return 0`);

/** Gives back ARGV[1] spent requests (KEYS[1], the month's count) unless the count is gone (then it is seeded again). */
const REFUND = new RedisScript(`if redis.call('exists', KEYS[1]) == 1 then return redis.call('decrby', KEYS[1], ARGV[1]) end
return 0`);

/** A count outlives its month by this much, so a node whose clock lags a little still finds it. */
const COUNT_GRACE_SECONDS = 3_600;

export interface MonthlyQuotaOptions {
  prefix: string;
  tierQuotas: Record<Tier, number>;
  limitCacheSeconds: number;
  flushIntervalMs: number;
  redisTimeoutMs: number;
}

/** What PostgreSQL says of an organisation's month: its limit (and whether an operator set it) and the requests recorded. */
export interface RecordedMonth {
  limit: number;
  limitSetByOperator: boolean;
  recorded: number;
}

/**
 * Each organisation's monthly request quota (UTC calendar months), across its keys, both hosts and
 * every node.
 *
 * The hot count is one Redis key per organisation and month, spent with one script call; the limit
 * sits beside it for `limitCacheSeconds`. PostgreSQL keeps the record: each node counts the requests
 * it served per (organisation, day, key) and adds them every `flushIntervalMs` (UsageRecord),
 * with each month's total; a count Redis no longer has is seeded from that total, and after every
 * flush a count lower than the total is raised to it. So the count only ever errs low (in the
 * client's favour), and heals: when Redis loses its data, by what the nodes had not flushed yet (at
 * most one flush interval of requests), until their next flush; when a node dies, its last
 * interval's requests stay in Redis's count but are missing from the record (usage by day and key).
 * While Redis or PostgreSQL does not answer, requests are served (a quota is not a safety limit),
 * still counted for the record, and reported without quota headers.
 */
export class MonthlyQuota {
  readonly record: UsageRecord;
  private readonly seeds = new Map<string, Promise<RecordedMonth | undefined>>();
  private timer?: NodeJS.Timeout;
  private degraded = false;

  constructor(
    private readonly db: Knex,
    private readonly redis: RedisClient,
    private readonly options: MonthlyQuotaOptions,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.record = new UsageRecord(db);
  }

  /** Flushes the record every `flushIntervalMs` until `close`. */
  start(): void {
    this.timer ??= setInterval(() => void this.flush().catch((error: unknown) => this.logger.warn({ err: error }, 'flushing request counts to PostgreSQL failed; kept for the next flush')), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and flushes what is left (best effort: the process is going). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush().catch(() => undefined);
  }

  now(): Date {
    return this.clock.now();
  }

  /**
   * Spends `requests` of the organisation's month, all or none; throws 429 QUOTA_EXCEEDED when the
   * month has no room for them. Returns the month's state for the headers, or undefined when Redis
   * or PostgreSQL did not answer.
   */
  spend(organizationId: string, apiKeyId: string, at = this.clock.now(), requests = 1): Promise<QuotaState | undefined> {
    const month = quotaMonthOf(at);
    const keys = this.keysOf(organizationId, month);
    return withinMs(SPEND.run(this.redis, keys, [String(requests)]), this.options.redisTimeoutMs, 'Redis')
      .then((reply) => {
        const [used, limit, spent] = reply as number[];
        if (used === -1) return this.seedAndSpend(organizationId, month, keys, requests);
        return [used, limit, spent];
      })
      .then(
        (reply) => {
          this.degraded = false;
          return this.verdict(reply, organizationId, apiKeyId, at, month, requests);
        },
        // Redis or PostgreSQL did not answer (QUOTA_EXCEEDED, thrown by the verdict, passes by).
        (error: unknown) => {
          this.failOpen(error);
          this.record.count(organizationId, usageDayOf(at), apiKeyId, requests);
          return undefined;
        },
      );
  }

  /**
   * Gives back `requests` that `spend` counted at `at` (the rate limit refused them after all), in
   * Redis and in the record; best effort.
   */
  refund(organizationId: string, apiKeyId: string, at: Date, requests = 1): void {
    this.record.count(organizationId, usageDayOf(at), apiKeyId, -requests);
    void withinMs(REFUND.run(this.redis, [this.keysOf(organizationId, quotaMonthOf(at))[0]], [String(requests)]), this.options.redisTimeoutMs, 'Redis').catch(() => undefined);
  }

  /** The organisation's month without spending: the count Redis holds, else the record. */
  async state(organizationId: string): Promise<QuotaState & { limitSetByOperator: boolean }> {
    const month = quotaMonthOf(this.clock.now());
    const recorded = await this.recorded(organizationId, month);
    if (!recorded) throw KeelError.notFound('Organisation');
    const count = await withinMs(this.redis.get(this.keysOf(organizationId, month)[0]), this.options.redisTimeoutMs, 'Redis').catch(() => null);
    const used = Math.max(recorded.recorded, count === null ? 0 : Number(count));
    return { ...stateOf(used, recorded.limit, month), limitSetByOperator: recorded.limitSetByOperator };
  }

  /** Adds this node's counts to the record and raises the Redis counts lower than the new totals. */
  async flush(): Promise<void> {
    const totals = await this.record.flush();
    if (totals.length) await this.raise(totals);
  }

  /** Makes every node read the organisation's limit from PostgreSQL on its next request (after `keel quota set`). */
  async forgetLimit(organizationId: string): Promise<void> {
    await withinMs(this.redis.del(this.limitKey(organizationId)), this.options.redisTimeoutMs, 'Redis');
  }

  /** The organisation's limit and recorded requests for the month; undefined for an unknown organisation. */
  async recorded(organizationId: string, month: QuotaMonth): Promise<RecordedMonth | undefined> {
    const row = await this.db('organizations as o')
      .where('o.id', organizationId)
      .first(
        'o.tier',
        'o.monthly_quota',
        this.db.raw(`coalesce((SELECT m.requests FROM api_usage_monthly m WHERE m.organization_id = o.id AND m.month = ?), 0)::float8 AS recorded`, [month.start.toISOString().slice(0, 10)]),
      );
    if (!row) return undefined;
    const operatorQuota = row.monthlyQuota === null ? null : Number(row.monthlyQuota);
    return { limit: operatorQuota ?? this.options.tierQuotas[row.tier as Tier], limitSetByOperator: operatorQuota !== null, recorded: Number(row.recorded) };
  }

  private async seedAndSpend(organizationId: string, month: QuotaMonth, keys: string[], requests: number): Promise<number[]> {
    // Requests of one organisation arriving together share one read of PostgreSQL; each still spends.
    const id = `${organizationId}|${month.key}`;
    let seed = this.seeds.get(id);
    if (!seed) {
      seed = this.recorded(organizationId, month).finally(() => this.seeds.delete(id));
      this.seeds.set(id, seed);
    }
    const recorded = await seed;
    if (!recorded) throw KeelError.notFound('Organisation');
    const countTtl = Math.max(1, Math.ceil((month.end.getTime() - this.clock.now().getTime()) / 1000)) + COUNT_GRACE_SECONDS;
    const call = SEED_AND_SPEND.run(this.redis, keys, [String(recorded.recorded), String(countTtl), String(recorded.limit), String(this.options.limitCacheSeconds), String(requests)]);
    return (await withinMs(call, this.options.redisTimeoutMs, 'Redis')) as number[];
  }

  private verdict([used, limit, spent]: number[], organizationId: string, apiKeyId: string, at: Date, month: QuotaMonth, requests: number): QuotaState {
    const state = stateOf(used, limit, month);
    if (!spent) throw new QuotaExceeded(state, this.clock.now());
    this.record.count(organizationId, usageDayOf(at), apiKeyId, requests);
    return state;
  }

  private async raise(totals: MonthTotal[]): Promise<void> {
    const keys = totals.map((t) => `${this.options.prefix}quota:used:${t.organizationId}:${t.month}`);
    await withinMs(RAISE.run(this.redis, keys, totals.map((t) => String(t.requests))), this.options.redisTimeoutMs, 'Redis');
  }

  private failOpen(error: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn({ err: error }, 'monthly quota not checked (Redis or PostgreSQL did not answer): requests are served and recorded');
  }

  private keysOf(organizationId: string, month: QuotaMonth): string[] {
    return [`${this.options.prefix}quota:used:${organizationId}:${month.key}`, this.limitKey(organizationId)];
  }

  private limitKey(organizationId: string): string {
    return `${this.options.prefix}quota:limit:${organizationId}`;
  }
}

function stateOf(used: number, limit: number, month: QuotaMonth): QuotaState {
  return { limit, used, remaining: Math.max(0, limit - used), reset: month.end.getTime() / 1000 };
}

/** 429 QUOTA_EXCEEDED, with Retry-After until the month resets (by the quota's clock, `now`). */
export class QuotaExceeded extends KeelError {
  constructor(
    readonly state: QuotaState,
    now: Date,
  ) {
    super('QUOTA_EXCEEDED', "The organisation's monthly request quota is spent; it resets at resetAt", {
      limit: state.limit,
      used: state.used,
      resetAt: new Date(state.reset * 1000).toISOString(),
    });
    this.retryAfterSeconds = Math.max(1, Math.ceil(state.reset - now.getTime() / 1000));
  }
}
