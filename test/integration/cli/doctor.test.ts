import http from 'node:http';
import { Client } from 'pg';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, databaseUrl, dropTestDatabase, runPrefix, withAdmin } from '../../support/databases';
import { PrivateRedis } from '../../support/private-redis';
import { runKeel } from '../../support/keel-process';
import { parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';

const MACHINE_REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const migrated = `${runPrefix()}_doctor_${process.pid}`;
const empty = `${runPrefix()}_doctor_empty_${process.pid}`;
const newer = `${runPrefix()}_doctor_newer_${process.pid}`;

/** The environment of a deployment: the test chains and master key the global setup made. */
const env = (more: Record<string, string>) => ({ KEEL_CHAINS: process.env.KEEL_CHAINS!, KEEL_MASTER_KEY: process.env.KEEL_MASTER_KEY!, DATABASE_URL: databaseUrl(migrated), REDIS_URL: MACHINE_REDIS, STARTUP_CONNECT_TIMEOUT_MS: '2000', ...more });
const lines = (stdout: string) => stdout.trim().split('\n');

beforeAll(async () => {
  await createTestDatabase(migrated);
  await withAdmin((c) => c.query(`CREATE DATABASE "${empty}"`));
  await createTestDatabase(newer);
});
afterAll(async () => {
  await dropTestDatabase(migrated);
  await dropTestDatabase(empty);
  await dropTestDatabase(newer);
});

test('with everything up: one ok line per check (PostgreSQL, migrations, Redis, master key, each chain) and exit 0', async () => {
  const { code, stdout, stderr } = await runKeel(['doctor'], env({}), 60_000);
  const chains = parseChainsConfig(process.env.KEEL_CHAINS!);
  expect(lines(stdout).map((l) => l.split(':')[0])).toEqual(['ok   PostgreSQL', 'ok   migrations', 'ok   Redis', 'ok   master key', ...chains.map((c) => `ok   chain ${c.slug} (${c.chainId})`)]);
  expect(stdout).toMatch(/master key: KEEL_MASTER_KEY \(key id [0-9a-f]{16}\); every sealed secret opens with it/);
  expect(stdout).toMatch(/^ok   PostgreSQL: .* \(PostgreSQL \d+\.\d+/m);
  expect(stderr).toBe('');
  expect(code).toBe(0);
});

test('a stopped Redis is one FAIL line naming its address and how to start it; exit 1, no stack', async () => {
  const redis = await PrivateRedis.start();
  await redis.kill();
  const { code, stdout, stderr } = await runKeel(['doctor'], env({ REDIS_URL: redis.url }), 60_000);
  const failed = lines(stdout).filter((l) => l.startsWith('FAIL'));
  expect(failed).toEqual([`FAIL Redis: 127.0.0.1:${redis.port}: not reachable (ECONNREFUSED). Fix: Start it with \`docker compose up -d postgres redis\`, or on Debian \`redis-server --daemonize yes\`.`]);
  expect(lines(stdout).filter((l) => l.includes('Redis'))).toEqual(failed);
  expect(stdout + stderr).not.toMatch(/\n\s+at /);
  expect(stderr).toBe('');
  expect(code).toBe(1);
});

test('a PostgreSQL that refuses the login is one FAIL line saying so and how to let Keel in (not how to start a server that runs); exit 1', async () => {
  const url = new URL(databaseUrl(migrated));
  url.username = 'no_such_role_doctor';
  url.password = 'secret-password';
  const { code, stdout, stderr } = await runKeel(['doctor'], env({ DATABASE_URL: url.toString() }), 60_000);
  const line = lines(stdout).find((l) => l.includes('PostgreSQL'));
  expect(line).toMatch(/^FAIL PostgreSQL: .*: the server refuses the login \(role "no_such_role_doctor" does not exist\)\. Fix: Put the role's password in DATABASE_URL .*`host all all 127\.0\.0\.1\/32 trust`/);
  expect(stdout + stderr).not.toContain('secret-password');
  expect(code).toBe(1);
});

/** The tables of a database, in every schema but PostgreSQL's own. */
async function tablesOf(name: string): Promise<string[]> {
  const client = new Client({ connectionString: databaseUrl(name) });
  await client.connect();
  try {
    return (await client.query<{ name: string }>("SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')")).rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

test('a database not yet migrated: the migrations line says how many are pending and what to run; a warning, exit 0; the database is left as it was, without a table', async () => {
  const { code, stdout } = await runKeel(['doctor'], env({ DATABASE_URL: databaseUrl(empty) }), 60_000);
  expect(lines(stdout).find((l) => l.includes('migrations'))).toMatch(/^WARN migrations: not migrated: \d+ pending \(001_foundation, .*\)\. Fix: `npx keel migrate` applies them/);
  expect(code).toBe(0);
  // A diagnostic creates nothing: not even knex's own knex_migrations and knex_migrations_lock.
  expect(await tablesOf(empty)).toEqual([]);
});

test('a database a newer Keel migrated: the migrations line names the migrations this build does not know; a failure, exit 1', async () => {
  const client = new Client({ connectionString: databaseUrl(newer) });
  await client.connect();
  await client.query("INSERT INTO knex_migrations (name, batch, migration_time) VALUES ('999_from_a_newer_keel', 99, now())").finally(() => client.end());
  const { code, stdout } = await runKeel(['doctor'], env({ DATABASE_URL: databaseUrl(newer) }), 60_000);
  expect(lines(stdout).find((l) => l.includes('migrations'))).toBe('FAIL migrations: has migrations this build does not know (999_from_a_newer_keel). Fix: run the Keel version that migrated this database, or a newer one');
  expect(code).toBe(1);
});

test('an unreachable chain RPC and a malformed master key are failures; --json prints them as one object', async () => {
  const chains = parseChainsConfig(process.env.KEEL_CHAINS!);
  const offline = [{ ...chains[0], rpcUrl: 'http://127.0.0.1:9/secret-api-key' }];
  const { code, stdout } = await runKeel(['doctor', '--json'], env({ KEEL_CHAINS: JSON.stringify(offline), KEEL_MASTER_KEY: 'not-a-key' }), 60_000);
  const report = JSON.parse(stdout) as { ok: boolean; checks: { check: string; status: string; detail: string; fix?: string }[] };
  expect(report.ok).toBe(false);
  const byName = Object.fromEntries(report.checks.map((c) => [c.check, c]));
  expect(byName['master key']).toMatchObject({ status: 'fail', detail: 'KEEL_MASTER_KEY must be 32 bytes, written as 64 hex digits or base64' });
  expect(byName[`chain ${chains[0].slug} (${chains[0].chainId})`]).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^RPC at http:\/\/127\.0\.0\.1:9 not reachable/) });
  // An RPC URL's path may hold a provider's key: only the origin is printed.
  expect(stdout).not.toContain('secret-api-key');
  expect(code).toBe(1);
});

test('a Solana cluster in KEEL_CHAINS is checked too: its finalized slot, or a failure naming only the origin', async () => {
  const devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 2 });
  try {
    const solana = { family: 'solana', name: 'Sandbox Solana', network: 'devnet', rpcUrl: devnet.rpcUrl };
    const offline = { family: 'solana', name: 'Down', network: 'mainnet', rpcUrl: 'http://127.0.0.1:9/secret-api-key' };
    const { code, stdout } = await runKeel(['doctor', '--json'], env({ KEEL_CHAINS: JSON.stringify([...parseChainsConfig(process.env.KEEL_CHAINS!), solana, offline]) }), 60_000);
    const byName = Object.fromEntries((JSON.parse(stdout) as { checks: { check: string; status: string; detail: string }[] }).checks.map((c) => [c.check, c]));
    expect(byName['chain solana-devnet (solana devnet)']).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^RPC at http:\/\/127\.0\.0\.1:\d+, finalized slot \d+$/) });
    expect(byName['chain solana-mainnet (solana mainnet)']).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^RPC at http:\/\/127\.0\.0\.1:9 not reachable/) });
    expect(stdout).not.toContain('secret-api-key');
    expect(code).toBe(1);
  } finally {
    await devnet.stop();
  }
});

test("a node that answers an error (HTTP 401, a provider refusing its API key) is a failure naming only its origin: the key in its path, query or user:password is printed nowhere, even where the answer echoes them", async () => {
  const server = http.createServer((req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end(`invalid project id for ${req.url} (http://${req.headers.host}${req.url})`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const chains = parseChainsConfig(process.env.KEEL_CHAINS!);
    const keyed = [
      { ...chains[0], rpcUrl: `${origin}/v3/SECRET-PROJECT-KEY-123?apikey=SECRET-QUERY` },
      { family: 'solana', name: 'Keyed', network: 'mainnet', rpcUrl: `http://keel:SECRET-PASSWORD@${origin.slice('http://'.length)}/v3/SECRET-PROJECT-KEY-123` },
    ];
    const { code, stdout, stderr } = await runKeel(['doctor', '--json'], env({ KEEL_CHAINS: JSON.stringify(keyed) }), 60_000);
    const byName = Object.fromEntries((JSON.parse(stdout) as { checks: { check: string; status: string; detail: string }[] }).checks.map((c) => [c.check, c]));
    const refused = (method: string, echoed: string) => `RPC at ${origin} not reachable (${method} at ${origin}: HTTP 401, not JSON-RPC: invalid project id for ${echoed} (${origin}))`;
    const evm = byName[`chain ${chains[0].slug} (${chains[0].chainId})`];
    expect(evm.status).toBe('fail');
    // Whichever of its two calls failed first.
    expect([refused('eth_chainId', '/…?…'), refused('eth_blockNumber', '/…?…')]).toContain(evm.detail);
    expect(byName['chain solana-mainnet (solana mainnet)']).toMatchObject({ status: 'fail', detail: refused('getSlot', '/…') });
    expect(stdout + stderr).not.toMatch(/SECRET/);
    expect(code).toBe(1);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
