import { connectRedis, RedisClient } from '../../../src/platform/redis';
import { RateLimiter, RateLimitExceeded } from '../../../src/platform/rate-limit';
import { PrivateRedis } from '../../support/private-redis';

/** The rate limit's one script per request, on a Redis of the test's own (it flushes the script cache). */
let redis: PrivateRedis;
let client: RedisClient;
let other: RedisClient;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  client = await connectRedis(redis.url);
  other = await connectRedis(redis.url);
});
afterAll(async () => {
  client.destroy();
  other.destroy();
  await redis.kill();
});

/** Long enough that a loaded machine never falls back to the in-process counters, which these tests are not about. */
const REDIS_TIMEOUT_MS = 30_000;

const startOfNextSecond = () => new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));

test('two nodes spend one budget: every window counted once per request, the tightest reported, the sixth in a second refused', async () => {
  const nodes = [new RateLimiter(client, 'shared:', 1, REDIS_TIMEOUT_MS), new RateLimiter(other, 'shared:', 1, REDIS_TIMEOUT_MS)];
  await startOfNextSecond();
  const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => nodes[i % 2].consume('Starter', 'key-a')));
  const allowed = outcomes.filter((o): o is PromiseFulfilledResult<Awaited<ReturnType<RateLimiter['consume']>>> => o.status === 'fulfilled');
  expect(allowed.map((o) => o.value.remaining).sort()).toEqual([0, 1, 2, 3, 4]);
  expect(allowed.every((o) => o.value.limit === 5)).toBe(true);
  const [refused] = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  expect(refused.reason).toBeInstanceOf(RateLimitExceeded);
  expect((refused.reason as RateLimitExceeded).state).toMatchObject({ limit: 5, remaining: 0 });
  // Each window's counter saw all six, the refused one included (as rate-limiter-flexible counted).
  expect(await client.mGet(['shared:rl:Starter:s:key-a', 'shared:rl:Starter:m:key-a', 'shared:rl:Starter:d:key-a'])).toEqual(['6', '6', '6']);
});

test('a Redis that lost its scripts (restart, SCRIPT FLUSH) is sent the script again, and the count goes on', async () => {
  const limiter = new RateLimiter(client, 'flushed:', 1, REDIS_TIMEOUT_MS);
  await startOfNextSecond();
  expect((await limiter.consume('Starter', 'key-b')).remaining).toBe(4);
  await client.scriptFlush();
  expect((await limiter.consume('Starter', 'key-b')).remaining).toBe(3);
  expect(await client.get('flushed:rl:Starter:m:key-b')).toBe('2');
});

test('requests given back return to every window of the key, never below zero; a window since expired gets nothing', async () => {
  const limiter = new RateLimiter(client, 'refund:', 1, REDIS_TIMEOUT_MS);
  await startOfNextSecond();
  await limiter.consume('Starter', 'key-c', 3);
  await limiter.refund('Starter', 'key-c', 2);
  expect(await client.mGet(['refund:rl:Starter:s:key-c', 'refund:rl:Starter:m:key-c', 'refund:rl:Starter:d:key-c'])).toEqual(['1', '1', '1']);
  await limiter.refund('Starter', 'key-c', 5);
  expect(await client.mGet(['refund:rl:Starter:s:key-c', 'refund:rl:Starter:m:key-c', 'refund:rl:Starter:d:key-c'])).toEqual(['0', '0', '0']);
  await limiter.refund('Starter', 'key-d', 2);
  expect(await client.exists('refund:rl:Starter:s:key-d')).toBe(0);
  expect((await limiter.consume('Starter', 'key-c', 5)).remaining).toBe(0);
});
