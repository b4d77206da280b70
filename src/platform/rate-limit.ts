import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts } from 'rate-limiter-flexible';
import { KeelError } from './errors';
import { Tier, TIERS } from './auth/permissions';
import type { RedisClient } from './redis';

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

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** UTC epoch seconds when the reported window resets. */
  reset: number;
}

interface Window {
  points: number;
  limiter: RateLimiterAbstract;
}

/**
 * Counts requests per API key in Redis, so every node spends one shared budget.
 * The reported window is the tightest one: the one with the fewest requests left.
 * When Redis does not answer within `redisTimeoutMs` (down, paused, reconnecting), each window
 * falls back to an in-process counter with the same budget (rate-limiter-flexible's insurance
 * limiter): per node while Redis is away, and shared again as soon as it answers.
 */
export class RateLimiter {
  private readonly limiters: Record<Tier, Window[]>;

  constructor(redis: RedisClient, prefix: string, scale: number, redisTimeoutMs: number) {
    this.limiters = Object.fromEntries(
      TIERS.map((tier) => [
        tier,
        WINDOWS.map((w) => sharedWindow(redis, `${prefix}rl:${tier}:${w.name}`, Math.max(1, Math.round(TIER_LIMITS[tier][w.field] * scale)), w.seconds, redisTimeoutMs)),
      ]),
    ) as Record<Tier, Window[]>;
  }

  /** Spends one request; throws 429 RATE_LIMIT_EXCEEDED (with the headers' state) when over. */
  async consume(tier: Tier, keyId: string): Promise<RateLimitState> {
    return consumeWindows(this.limiters[tier], keyId);
  }
}

/**
 * The same shared budget for callers without an API key (the public checkout API and page): one
 * window of `perMinute` requests per client address.
 */
export class ClientRateLimiter {
  private readonly windows: Window[];

  constructor(redis: RedisClient, prefix: string, name: string, perMinute: number, redisTimeoutMs: number) {
    this.windows = [sharedWindow(redis, `${prefix}rl:client:${name}:m`, perMinute, 60, redisTimeoutMs)];
  }

  /** Spends one request of `clientKey` (its address); throws 429 RATE_LIMIT_EXCEEDED when over. */
  async consume(clientKey: string): Promise<RateLimitState> {
    return consumeWindows(this.windows, clientKey);
  }
}

function sharedWindow(redis: RedisClient, keyPrefix: string, points: number, seconds: number, redisTimeoutMs: number): Window {
  const shared = new RateLimiterRedis({
    storeClient: redis,
    useRedisPackage: true,
    rejectIfRedisNotReady: true,
    keyPrefix,
    points,
    duration: seconds,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: seconds }),
  });
  return { points, limiter: new RLWrapperTimeouts({ limiter: shared, timeoutMs: redisTimeoutMs }) };
}

/** Spends one request in every window; the reported state is the tightest window's. */
async function consumeWindows(limiters: Window[], key: string): Promise<RateLimitState> {
  const outcomes = await Promise.allSettled(limiters.map((w) => w.limiter.consume(key)));
  let tightest: RateLimitState | undefined;
  let exceeded: RateLimitState | undefined;
  outcomes.forEach((o, i) => {
    const res = o.status === 'fulfilled' ? o.value : o.reason;
    if (!(res instanceof RateLimiterRes)) return; // both stores failed: fail open
    const state = {
      limit: limiters[i].points,
      remaining: Math.max(0, res.remainingPoints),
      reset: Math.ceil((Date.now() + res.msBeforeNext) / 1000),
    };
    if (o.status === 'rejected' && (!exceeded || state.reset > exceeded.reset)) exceeded = state;
    if (!tightest || state.remaining < tightest.remaining) tightest = state;
  });
  if (exceeded) {
    throw new RateLimitExceeded(exceeded);
  }
  return tightest ?? { limit: limiters[0].points, remaining: limiters[0].points, reset: Math.ceil(Date.now() / 1000) + 1 };
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
