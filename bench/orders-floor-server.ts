import type { IncomingMessage } from 'node:http';
import { Pool } from 'pg';
import { connectRedis } from '../src/platform/redis';
import { RateLimiter } from '../src/platform/rate-limit';
import { serveJson } from './support';
import { groupCommittedOrders } from './group-commit';

/**
 * The orders benchmark's yardstick: node:http that answers each `POST` only after the order is
 * durably stored, the least issue 5 asks of an acknowledged order, and nothing more: the key's rate
 * limit spent in Redis (Keel's own RateLimiter), the JSON body parsed, and the order inserted as one
 * row, group-committed (every order that arrives while a commit runs goes into the next one, a
 * single multi-row INSERT). No authentication, matching, balances, trades or ORM.
 */
async function main(): Promise<void> {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
  const rateLimiter = new RateLimiter(await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), 'keelbench:floor:', 100_000, 250);
  const port = Number(process.env.PORT);

  const store = await groupCommittedOrders(pool);

  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };

  serveJson(port, async (req) => {
    await rateLimiter.consume('Business', 'bench');
    const id = await store(await readBody(req));
    return { status: 201, body: { data: { id, status: 'OPEN' } } };
  });
}

void main();
