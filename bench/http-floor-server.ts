import { Pool } from 'pg';
import { connectRedis } from '../src/platform/redis';
import { RateLimiter } from '../src/platform/rate-limit';
import { serveJson } from './support';

/**
 * The http benchmark's yardsticks: node:http and one prepared PostgreSQL query per request, the
 * same query Keel's `GET /v1/api-keys` runs, with no framework, authentication, GraphQL or ORM.
 * With RATE_LIMIT_KEY set it also spends that key's rate limit in Redis first, with Keel's own
 * RateLimiter: the least work issue 2 asks of every authenticated request.
 * What this machine allows for a database-backed read, measured beside Keel.
 */
async function main(): Promise<void> {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
  const orgId = process.env.ORG_ID;
  const port = Number(process.env.PORT);
  const rateLimitKey = process.env.RATE_LIMIT_KEY;
  const rateLimiter = rateLimitKey
    ? new RateLimiter(await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), 'keelbench:floor:', 100_000, 250)
    : undefined;

  serveJson(port, async () => {
    if (rateLimiter) await rateLimiter.consume('Business', rateLimitKey!);
    const { rows } = await pool.query({
      name: 'keys',
      text: 'SELECT * FROM api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id LIMIT 50 OFFSET 0',
      values: [orgId],
    });
    return { status: 200, body: { data: rows, total: rows.length, hasMore: false } };
  });
}

void main();
