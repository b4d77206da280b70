import { connectRedis, RedisClient } from '../../../src/platform/redis';
import { RateLimiter, RateLimitExceeded } from '../../../src/platform/rate-limit';
import { PrivateRedis } from '../../support/private-redis';
import { eventually } from '../../support/eventually';

let redis: PrivateRedis;
let client: RedisClient;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  client = await connectRedis(redis.url);
});
afterAll(async () => {
  client.destroy();
  await redis.kill();
});

/** Spends `n` requests of one key and says how many were allowed. */
async function allowed(limiter: RateLimiter, keyId: string, n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    try {
      await limiter.consume('Starter', keyId);
      ok++;
    } catch (e) {
      if (!(e instanceof RateLimitExceeded)) throw e;
    }
  }
  return ok;
}

test('with Redis down, each window is counted in the process with the same budget (Starter: 5 a second)', async () => {
  const limiter = new RateLimiter(client, 'fallback-down:', 1, 250);
  await redis.kill();
  const started = performance.now();
  expect(await allowed(limiter, 'key-a', 8)).toBe(5);
  expect(performance.now() - started).toBeLessThan(1_000);
  await redis.restart();
});

test('with Redis down, requests given back return to the in-process budget they were spent from', async () => {
  const limiter = new RateLimiter(client, 'fallback-refund:', 1, 250);
  await eventually(() => client.isReady, 10_000); // reconnected by itself after the first test's restart
  await redis.kill();
  try {
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    await limiter.consume('Starter', 'key-c', 4);
    await limiter.refund('Starter', 'key-c', 4);
    await limiter.refund('Starter', 'key-d', 4);
    expect(await allowed(limiter, 'key-c', 6)).toBe(5);
    expect(await allowed(limiter, 'key-d', 6)).toBe(5);
  } finally {
    await redis.restart();
  }
});

test('with Redis paused, each request gives Redis REDIS_COMMAND_TIMEOUT_MS, then the in-process budget decides', async () => {
  const limiter = new RateLimiter(client, 'fallback-paused:', 1, 100);
  await eventually(() => client.isReady, 10_000); // reconnected by itself after the first test's restart
  await limiter.consume('Starter', 'warm');
  redis.pause();
  try {
    const started = performance.now();
    const answers = await Promise.allSettled(Array.from({ length: 8 }, () => limiter.consume('Starter', 'key-b')));
    const ms = performance.now() - started;
    expect(ms).toBeGreaterThanOrEqual(95); // Redis was asked first
    expect(ms).toBeLessThan(1_000);
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(5);
    expect(answers.filter((a) => a.status === 'rejected').every((a) => (a as PromiseRejectedResult).reason instanceof RateLimitExceeded)).toBe(true);
  } finally {
    redis.resume();
  }
});
