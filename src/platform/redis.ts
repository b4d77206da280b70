import { createClient } from 'redis';
import { withinMs } from './time-bound';

export type RedisClient = ReturnType<typeof createClient>;

/** Commands waiting for a reply beyond this are refused at once ("The queue is full"): a paused Redis cannot grow the queue without bound. */
const MAX_PENDING_COMMANDS = 10_000;

/** Reconnect after 50 ms, doubling to at most 2 s, with jitter so nodes do not reconnect in step. */
export function reconnectDelayMs(retries: number): number {
  return Math.min(50 * 2 ** retries, 2_000) + Math.floor(Math.random() * 100);
}

/**
 * One node-redis connection; callers prefix their keys with config.REDIS_PREFIX. While Redis is
 * unreachable, commands fail at once instead of queueing for the reconnect; the client reconnects
 * with backoff and resubscribes its channels by itself. The first connection must succeed at once
 * (within `connectTimeoutMs`), so a node never starts half-way.
 */
export async function connectRedis(url: string, connectTimeoutMs = 4_000): Promise<RedisClient> {
  let connected = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    commandsQueueMaxLength: MAX_PENDING_COMMANDS,
    // Refused or unreachable at start: fail at once with the cause; once up, always come back.
    socket: { connectTimeout: connectTimeoutMs, reconnectStrategy: (retries, cause) => (connected ? reconnectDelayMs(retries) : cause) },
  });
  let socketError: unknown;
  client.on('error', (error) => {
    // Reconnects on its own; /ready reports the outage.
    socketError = error;
  });
  try {
    await withinMs(client.connect(), connectTimeoutMs, 'Redis');
    connected = true;
  } catch (error) {
    if (client.isOpen) client.destroy();
    // connect() reports only that the client closed; the socket's error says why (ECONNREFUSED, …).
    throw socketError ?? error;
  }
  return client;
}

/**
 * Closes a client: the commands it has sent get their replies within `timeoutMs` (with Redis down
 * or paused they would wait for it forever), then it is destroyed, refusing whatever is left.
 */
export async function closeRedis(client: RedisClient, timeoutMs: number): Promise<void> {
  if (!client.isOpen) return;
  await withinMs(client.close(), timeoutMs, 'Redis').catch(() => client.destroy());
}
