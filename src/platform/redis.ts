import { createClient } from 'redis';

export type RedisClient = ReturnType<typeof createClient>;

/** One node-redis connection; callers prefix their keys with config.REDIS_PREFIX. */
export async function connectRedis(url: string): Promise<RedisClient> {
  const client = createClient({ url, socket: { reconnectStrategy: (retries) => Math.min(retries * 100, 2_000) } });
  client.on('error', () => {
    // Reconnects on its own; /ready reports the outage.
  });
  await client.connect();
  return client;
}
