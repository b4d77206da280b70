import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { KeelError } from './errors';
import { Tier, TIERS } from './auth/permissions';
import type { RedisClient } from './redis';
import { withinMs } from './time-bound';
import { RedisScript } from './redis-script';

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
 * Spends requests in every window of a key in one round trip: per window (KEYS[i], its length in
 * seconds ARGV[i], its budget ARGV[n + i]) a fixed window that starts with its first request, as
 * rate-limiter-flexible counts it (same keys, same counting, so nodes of either build share one
 * budget). ARGV[2n + 1] is the number of requests: one is counted even when refused (as
 * rate-limiter-flexible counts it); several (a GraphQL document's further mutations) are spent all
 * or none, given back when any window cannot hold them all. Returns {count, ms left} per window,
 * then the requests spent.
 */
const SPEND_SCRIPT = new RedisScript(`local n = #KEYS
local requests = tonumber(ARGV[2 * n + 1])
local out = {}
local over = false
for i = 1, n do
  local seconds = tonumber(ARGV[i])
  redis.call('set', KEYS[i], 0, 'EX', seconds, 'NX')
  local consumed = redis.call('incrby', KEYS[i], requests)
  if consumed > tonumber(ARGV[n + i]) then over = true end
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 then
    redis.call('expire', KEYS[i], seconds)
    ttl = 1000 * seconds
  end
  out[#out + 1] = consumed
  out[#out + 1] = ttl
end
if over and requests > 1 then
  for i = 1, n do out[2 * i - 1] = redis.call('decrby', KEYS[i], requests) end
  requests = 0
end
out[#out + 1] = requests
return out`);

/**
 * Gives `ARGV[1]` requests back to every window of a key (KEYS), never below zero; a window that
 * has since expired has nothing to give back to.
 */
const REFUND_SCRIPT = new RedisScript(`for i = 1, #KEYS do
  local consumed = tonumber(redis.call('get', KEYS[i]))
  if consumed then redis.call('decrby', KEYS[i], math.min(consumed, tonumber(ARGV[1]))) end
end
return 0`);

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

/** Windows spent together, with the script's arguments (each window's length, then its budget) made once. */
interface WindowSet {
  windows: Window[];
  args: string[];
}

function windowSet(windows: { keyPrefix: string; points: number; seconds: number }[]): WindowSet {
  return {
    windows: windows.map((w) => ({ ...w, fallback: new RateLimiterMemory({ keyPrefix: w.keyPrefix, points: w.points, duration: w.seconds }) })),
    args: [...windows.map((w) => String(w.seconds)), ...windows.map((w) => String(w.points))],
  };
}

/**
 * Spends requests of a key in every window of a set, in Redis so every node spends one shared
 * budget: one script call (EVALSHA, the script sent once per Redis server) spends all the windows
 * in one round trip. The reported window is the tightest one: the one with the fewest requests left.
 * When Redis does not answer within `redisTimeoutMs` (down, paused, reconnecting), every window
 * falls back to an in-process counter with the same budget: per node while Redis is away, and
 * shared again as soon as it answers.
 */
class SharedWindows {
  constructor(
    private readonly redis: RedisClient,
    private readonly redisTimeoutMs: number,
  ) {}

  /**
   * Spends `requests` (see SPEND_SCRIPT: one is counted even when refused, several are spent all or
   * none); throws 429 RATE_LIMIT_EXCEEDED (with the headers' state) when they do not fit.
   */
  consume(set: WindowSet, key: string, requests = 1): Promise<RateLimitState> {
    // Chained rather than awaited: this runs on every request, and each promise costs.
    return this.spendShared(set, key, requests).then(
      (counts) => {
        const now = Date.now();
        const spent = counts[2 * set.windows.length];
        return verdict(set.windows.map((w, i) => stateOf(w.points, counts[2 * i], counts[2 * i + 1], now, requests - spent)));
      },
      () => spendInProcess(set.windows, key, requests, Date.now()).then(verdict),
    );
  }

  /** Gives back `requests` spent, where they were counted: in Redis, or in the process while Redis does not answer. */
  async refund(set: WindowSet, key: string, requests: number): Promise<void> {
    try {
      await this.run(REFUND_SCRIPT, set, key, [String(requests)]);
    } catch {
      // As the script does: nothing given back to a window that has expired, nor below zero.
      await Promise.all(
        set.windows.map(async (w) => {
          const counted = await w.fallback.get(key);
          if (counted) await w.fallback.reward(key, Math.min(requests, counted.consumedPoints));
        }),
      );
    }
  }

  private spendShared(set: WindowSet, key: string, requests: number): Promise<number[]> {
    return this.run(SPEND_SCRIPT, set, key, [...set.args, String(requests)]) as Promise<number[]>;
  }

  private async run(script: RedisScript, set: WindowSet, key: string, args: string[]): Promise<unknown> {
    if (!this.redis.isReady) throw new Error('Redis connection is not ready');
    return withinMs(script.run(this.redis, set.windows.map((w) => `${w.keyPrefix}:${key}`), args), this.redisTimeoutMs, 'Redis');
  }
}

/**
 * The tightest window's state (the fewest requests left); 429 RATE_LIMIT_EXCEEDED when any window is
 * over, reporting the exceeded window that resets last (Retry-After: until then).
 */
function verdict(states: WindowVerdict[]): RateLimitState {
  let tightest: RateLimitState | undefined;
  let exceeded: WindowVerdict | undefined;
  for (const w of states) {
    if (w.over && (!exceeded || w.msLeft > exceeded.msLeft)) exceeded = w;
    if (!tightest || w.state.remaining < tightest.remaining) tightest = w.state;
  }
  if (exceeded) throw new RateLimitExceeded(exceeded.state, exceeded.msLeft);
  return tightest!;
}

/**
 * Redis did not answer: each window counted by this process (rate-limiter-flexible's memory store),
 * with the script's rule: several requests that do not fit are given back.
 */
async function spendInProcess(windows: Window[], key: string, requests: number, now: number): Promise<WindowVerdict[]> {
  const spent = await Promise.all(
    windows.map((w) =>
      w.fallback.consume(key, requests).then(
        (res) => res,
        (res: unknown) => {
          if (res instanceof RateLimiterRes) return res;
          throw res;
        },
      ),
    ),
  );
  const refused = requests > 1 && spent.some((res, i) => res.consumedPoints > windows[i].points);
  if (refused) await Promise.all(windows.map((w) => w.fallback.reward(key, requests)));
  return spent.map((res, i) => stateOf(windows[i].points, res.consumedPoints - (refused ? requests : 0), res.msBeforeNext, now, refused ? requests : 0));
}

/** The spec's budgets per API key: per second, per minute and per day, by the key's tier. */
export class RateLimiter {
  private readonly sets: Record<Tier, WindowSet>;
  private readonly shared: SharedWindows;

  constructor(redis: RedisClient, prefix: string, scale: number, redisTimeoutMs: number) {
    this.shared = new SharedWindows(redis, redisTimeoutMs);
    this.sets = Object.fromEntries(
      TIERS.map((tier) => [
        tier,
        windowSet(WINDOWS.map((w) => ({ keyPrefix: `${prefix}rl:${tier}:${w.name}`, points: Math.max(1, Math.round(TIER_LIMITS[tier][w.field] * scale)), seconds: w.seconds }))),
      ]),
    ) as Record<Tier, WindowSet>;
  }

  /**
   * Spends `requests` of the key (a request, or the further mutations of a GraphQL document); throws
   * 429 RATE_LIMIT_EXCEEDED (with the headers' state) when over. One request is counted even when
   * refused; several are spent all or none, so a document the budget cannot hold spends nothing
   * that smaller requests could still use.
   */
  consume(tier: Tier, keyId: string, requests = 1): Promise<RateLimitState> {
    return this.shared.consume(this.sets[tier], keyId, requests);
  }

  /** Gives back `requests` the key spent (consume) for work another budget then refused. */
  refund(tier: Tier, keyId: string, requests: number): Promise<void> {
    return this.shared.refund(this.sets[tier], keyId, requests);
  }
}

/**
 * The same shared budget for callers without an API key (the public checkout API and page): one
 * window of `perMinute` requests per client address.
 */
export class ClientRateLimiter {
  private readonly set: WindowSet;
  private readonly shared: SharedWindows;

  constructor(redis: RedisClient, prefix: string, name: string, perMinute: number, redisTimeoutMs: number) {
    this.shared = new SharedWindows(redis, redisTimeoutMs);
    this.set = windowSet([{ keyPrefix: `${prefix}rl:client:${name}:m`, points: perMinute, seconds: 60 }]);
  }

  /** Spends one request of `clientKey` (its address); throws 429 RATE_LIMIT_EXCEEDED when over. */
  consume(clientKey: string): Promise<RateLimitState> {
    return this.shared.consume(this.set, clientKey);
  }
}

/** A window after a spend: its state, whether it is over, and the milliseconds until it resets. */
interface WindowVerdict {
  state: RateLimitState;
  over: boolean;
  msLeft: number;
}

/** A window's state after a spend; `unspent`: requests asked for but given back (refused), which still make it over. */
function stateOf(points: number, consumed: number, msLeft: number, now: number, unspent = 0): WindowVerdict {
  return {
    state: { limit: points, remaining: Math.max(0, points - consumed), reset: Math.ceil((now + msLeft) / 1000) },
    over: consumed + unspent > points,
    msLeft,
  };
}

/** The `X-RateLimit-*` headers that report a budget's state. */
export function rateLimitHeaders(state: RateLimitState): Record<string, number> {
  return { 'X-RateLimit-Limit': state.limit, 'X-RateLimit-Remaining': state.remaining, 'X-RateLimit-Reset': state.reset };
}

/** 429 RATE_LIMIT_EXCEEDED; `msLeft`: until the exceeded window resets, sent as Retry-After (whole seconds, at least 1). */
export class RateLimitExceeded extends KeelError {
  constructor(
    readonly state: RateLimitState,
    msLeft: number,
  ) {
    super('RATE_LIMIT_EXCEEDED', 'Rate limit exceeded; retry after the reset time', {
      limit: state.limit,
      remaining: state.remaining,
      resetAt: new Date(state.reset * 1000).toISOString(),
    });
    this.retryAfterSeconds = Math.max(1, Math.ceil(msLeft / 1000));
  }
}
