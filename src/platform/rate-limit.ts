import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { KeelError } from './errors';
import { Tier, TIERS } from './auth/permissions';
import type { RedisClient } from './redis';
import { withinMs } from './time-bound';

/** The spec's per-key budgets, per tier: per second, per minute, per day. */
export const TIER_LIMITS: Record<Tier, { perSecond: number; perMinute: number; perDay: number }> = {
  Starter: { perSecond: 5, perMinute: 60, perDay: 10_000 },
  Pro: { perSecond: 20, perMinute: 300, perDay: 100_000 },
  Business: { perSecond: 50, perMinute: 1_000, perDay: 1_000_000 },
};

const WINDOWS = [
  { name: 's', seconds: 1, field: 'perSecond' },
  { name: 'm', seconds: 60, field: 'perMinute' },
  { name: 'd', seconds: 86_400, field: 'perDay' },
] as const;

/**
 * Spends one request in every window of a key in one round trip: per window (KEYS[i], its length
 * in seconds ARGV[i]) a fixed window that starts with its first request, as rate-limiter-flexible
 * counts it (same keys, same counting, so nodes of either build share one budget). Returns
 * {count, ms left} per window.
 */
const SPEND_SCRIPT = `local out = {}
for i = 1, #KEYS do
  local seconds = tonumber(ARGV[i])
  redis.call('set', KEYS[i], 0, 'EX', seconds, 'NX')
  local consumed = redis.call('incrby', KEYS[i], 1)
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 then
    redis.call('expire', KEYS[i], seconds)
    ttl = 1000 * seconds
  end
  out[#out + 1] = consumed
  out[#out + 1] = ttl
end
return out`;
const SPEND_SCRIPT_SHA = createHash('sha1').update(SPEND_SCRIPT).digest('hex');

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** UTC epoch seconds when the reported window resets. */
  reset: number;
}

interface Window {
  points: number;
  seconds: number;
  keyPrefix: string;
  /** Counts this window in the process while Redis does not answer. */
  fallback: RateLimiterMemory;
}

/**
 * Counts requests per API key in Redis, so every node spends one shared budget: one script call
 * (EVALSHA, the script sent once per Redis server) spends all of a key's windows in one round trip.
 * The reported window is the tightest one: the one with the fewest requests left.
 * When Redis does not answer within `redisTimeoutMs` (down, paused, reconnecting), every window
 * falls back to an in-process counter with the same budget: per node while Redis is away, and
 * shared again as soon as it answers.
 */
export class RateLimiter {
  private readonly windows: Record<Tier, Window[]>;
  private readonly keyArgs: Record<Tier, string[]>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    scale: number,
    private readonly redisTimeoutMs: number,
  ) {
    this.windows = Object.fromEntries(
      TIERS.map((tier) => [
        tier,
        WINDOWS.map((w) => {
          const points = Math.max(1, Math.round(TIER_LIMITS[tier][w.field] * scale));
          const keyPrefix = `${prefix}rl:${tier}:${w.name}`;
          return { points, seconds: w.seconds, keyPrefix, fallback: new RateLimiterMemory({ keyPrefix, points, duration: w.seconds }) };
        }),
      ]),
    ) as Record<Tier, Window[]>;
    this.keyArgs = Object.fromEntries(TIERS.map((tier) => [tier, this.windows[tier].map((w) => String(w.seconds))])) as Record<Tier, string[]>;
  }

  /** Spends one request; throws 429 RATE_LIMIT_EXCEEDED (with the headers' state) when over. */
  async consume(tier: Tier, keyId: string): Promise<RateLimitState> {
    const windows = this.windows[tier];
    const counts = await this.spendShared(tier, windows, keyId).catch(() => undefined);
    const now = Date.now();
    const states = counts ? windows.map((w, i) => stateOf(w.points, counts[2 * i], counts[2 * i + 1], now)) : await this.spendInProcess(windows, keyId, now);
    let tightest: RateLimitState | undefined;
    let exceeded: RateLimitState | undefined;
    for (const { state, over } of states) {
      if (over && (!exceeded || state.reset > exceeded.reset)) exceeded = state;
      if (!tightest || state.remaining < tightest.remaining) tightest = state;
    }
    if (exceeded) throw new RateLimitExceeded(exceeded);
    return tightest!;
  }

  private async spendShared(tier: Tier, windows: Window[], keyId: string): Promise<number[]> {
    if (!this.redis.isReady) throw new Error('Redis connection is not ready');
    const options = { keys: windows.map((w) => `${w.keyPrefix}:${keyId}`), arguments: this.keyArgs[tier] };
    const call = this.redis.evalSha(SPEND_SCRIPT_SHA, options).catch((error: unknown) => {
      // The first call on a Redis server (or after SCRIPT FLUSH or a restart) sends the script itself.
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return this.redis.eval(SPEND_SCRIPT, options);
      throw error;
    });
    return (await withinMs(call, this.redisTimeoutMs, 'Redis')) as number[];
  }

  /** Redis did not answer: each window counted by this process (rate-limiter-flexible's memory store). */
  private spendInProcess(windows: Window[], keyId: string, now: number): Promise<{ state: RateLimitState; over: boolean }[]> {
    return Promise.all(
      windows.map((w) =>
        w.fallback.consume(keyId).then(
          (res) => stateOf(w.points, res.consumedPoints, res.msBeforeNext, now),
          (res: unknown) => {
            if (res instanceof RateLimiterRes) return stateOf(w.points, res.consumedPoints, res.msBeforeNext, now);
            throw res;
          },
        ),
      ),
    );
  }
}

function stateOf(points: number, consumed: number, msLeft: number, now: number): { state: RateLimitState; over: boolean } {
  return {
    state: { limit: points, remaining: Math.max(0, points - consumed), reset: Math.ceil((now + msLeft) / 1000) },
    over: consumed > points,
  };
}

export class RateLimitExceeded extends KeelError {
  constructor(readonly state: RateLimitState) {
    super('RATE_LIMIT_EXCEEDED', 'Rate limit exceeded; retry after the reset time', {
      limit: state.limit,
      remaining: state.remaining,
      resetAt: new Date(state.reset * 1000).toISOString(),
    });
  }
}
