import type { RedisClient } from './redis';

/** A lease as Redis holds it: who holds it, under which fencing token, and for how much longer. */
export interface LeaseHolder {
  nodeId: string;
  token: string;
  /** Milliseconds left on the lease when read. */
  ttlMs: number;
}

/** The outcome of trying to take a lease: taken (with a new token), or held by someone else. */
export type TakeOutcome = { taken: true; token: string } | { taken: false; holder: LeaseHolder | null };

// A lease's value is `<token>|<nodeId>`: renewing and releasing compare the whole value, so a
// holder whose lease expired and was taken by another (even by the same node id) cannot touch it.

/** Takes the lease when it is free, or held under this node id (a restarted node): a new token from the counter either way. */
const TAKE = `
local current = redis.call('GET', KEYS[1])
if current then
  local sep = string.find(current, '|', 1, true)
  if string.sub(current, sep + 1) ~= ARGV[1] then return {0, current, redis.call('PTTL', KEYS[1])} end
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token .. '|' .. ARGV[1], 'PX', ARGV[2])
return {1, tostring(token), 0}`;

/** Extends the lease only if it still holds exactly this holder's value (compare-and-set). */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** Raises the token counter to at least ARGV[1] (Redis lost it, PostgreSQL remembers a higher token). */
const RAISE = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;

/** Every lease's value and time left, in the order of KEYS. */
const READ = `
local out = {}
for i, key in ipairs(KEYS) do out[i] = {redis.call('GET', key) or '', redis.call('PTTL', key)} end
return out`;

function holderOf(value: string, ttlMs: number): LeaseHolder | null {
  const sep = value.indexOf('|');
  if (!value || sep < 0) return null;
  return { token: value.slice(0, sep), nodeId: value.slice(sep + 1), ttlMs: Math.max(0, ttlMs) };
}

/**
 * Named leases in Redis with fencing tokens: at most one holder per name at a time, for `ttlMs`
 * unless renewed by that holder. Each new holding takes a token from a per-name counter (INCR), so
 * tokens grow with every new holder; the holder records it where its writes are checked.
 */
export class FencedLeases {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private leaseKey(name: string): string {
    return `${this.prefix}lease:${name}`;
  }

  private counterKey(name: string): string {
    return `${this.prefix}lease:${name}:token`;
  }

  private static value(token: string, nodeId: string): string {
    return `${token}|${nodeId}`;
  }

  async take(name: string, nodeId: string, ttlMs: number): Promise<TakeOutcome> {
    const [taken, value, ttl] = (await this.redis.eval(TAKE, { keys: [this.leaseKey(name), this.counterKey(name)], arguments: [nodeId, String(ttlMs)] })) as [number, string, number];
    return taken === 1 ? { taken: true, token: value } : { taken: false, holder: holderOf(value, ttl) };
  }

  /** True when the lease was still this holder's and now lives `ttlMs` more. */
  async renew(name: string, nodeId: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, { keys: [this.leaseKey(name)], arguments: [FencedLeases.value(token, nodeId), String(ttlMs)] })) === 1;
  }

  async release(name: string, nodeId: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE, { keys: [this.leaseKey(name)], arguments: [FencedLeases.value(token, nodeId)] });
  }

  /** Makes the next token handed out for `name` greater than `token`. */
  async raiseCounter(name: string, token: string): Promise<void> {
    await this.redis.eval(RAISE, { keys: [this.counterKey(name)], arguments: [token] });
  }

  /** The current holder of each name (null: free), in one round trip. */
  async holders(names: string[]): Promise<(LeaseHolder | null)[]> {
    if (names.length === 0) return [];
    const rows = (await this.redis.eval(READ, { keys: names.map((n) => this.leaseKey(n)), arguments: [] })) as [string, number][];
    return rows.map(([value, ttl]) => holderOf(value, ttl));
  }
}
