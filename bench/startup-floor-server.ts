import Fastify from 'fastify';
import { Pool } from 'pg';
import { connectRedis } from '../src/platform/redis';

/**
 * The startup benchmark's yardstick: the least a node's start does before it serves. It loads pg,
 * the Redis client and Fastify, connects to PostgreSQL and Redis, and listens; its `/ready` asks both,
 * as Keel's does. No schema, services, chains or workers.
 */
async function main(): Promise<void> {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  await pool.query('SELECT 1');
  const redis = await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const app = Fastify();
  app.get('/ready', async () => {
    await Promise.all([pool.query('SELECT 1'), redis.ping()]);
    return { status: 'ready' };
  });
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
  process.once('SIGTERM', () => void app.close().then(() => Promise.all([pool.end(), redis.quit()])).then(() => process.exit(0)));
}

void main();
