import { createServer } from 'node:http';
import { Pool } from 'pg';

/**
 * The http benchmark's yardstick: node:http and one prepared PostgreSQL query per request, the
 * same query Keel's `GET /v1/api-keys` runs, with no framework, authentication, rate limit,
 * GraphQL or ORM. What this machine allows for a database-backed read, measured beside Keel.
 */
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const orgId = process.env.ORG_ID;
const port = Number(process.env.PORT);

createServer((req, res) => {
  if (req.url === '/ready') {
    res.end('ok');
    return;
  }
  pool
    .query({ name: 'keys', text: 'SELECT * FROM api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id LIMIT 50 OFFSET 0', values: [orgId] })
    .then(({ rows }) => {
      const body = JSON.stringify({ data: rows, total: rows.length, hasMore: false });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    })
    .catch(() => {
      res.writeHead(500);
      res.end();
    });
}).listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
