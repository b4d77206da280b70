import 'reflect-metadata';
import type { FastifyInstance } from 'fastify';
import { Pool } from 'pg';
import { connectRedis } from '../src/platform/redis';
import { RateLimiter } from '../src/platform/rate-limit';
import { answeredAsResting, ordersStackFloorApp } from './orders-stack-floor-server';
import { workFloorStore } from './orders-work-floor-server';

/**
 * The orders benchmark's fifth yardstick: the stack floor's request path (Fastify, the Redis rate
 * limit, the type-graphql mutation compiled by graphql-jit, the envelope) in front of the work
 * floor's durable work (orders-work-floor-server.ts: Keel's group commit written by hand, on Keel's
 * tables, with the least matching and no checks) in place of the one stored row. Nothing of Keel's
 * own: no authentication, idempotency, REST shim, engine, checks or answer's view. Its rate over the
 * yardstick's is the most the design card's stack can reach here with this durable work behind it.
 */
export async function ordersStackWorkFloorApp(pool: Pool, organizationId: string, symbol: string, rateLimiter: RateLimiter): Promise<FastifyInstance> {
  return ordersStackFloorApp(answeredAsResting(await workFloorStore(pool, organizationId, symbol)), rateLimiter);
}

async function main(): Promise<void> {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
  const rateLimiter = new RateLimiter(await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), 'keelbench:stackworkfloor:', 100_000, 250);
  const app = await ordersStackWorkFloorApp(pool, process.env.ORGANIZATION_ID!, process.env.MARKET!, rateLimiter);
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

if (require.main === module) void main();
