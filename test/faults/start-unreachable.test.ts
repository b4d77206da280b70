import { randomBytes } from 'node:crypto';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../support/databases';
import { runKeel } from '../support/keel-process';
import { freePort } from '../support/private-redis';

const name = `${runPrefix()}_${randomBytes(4).toString('hex')}`;
let databaseUrl: string;
/** How long this machine takes just to load the CLI from the TypeScript sources (no connection made). */
let loadMs: number;

beforeAll(async () => {
  databaseUrl = await createTestDatabase(name);
  loadMs = (await runKeel(['--help'], {})).ms;
});
afterAll(() => dropTestDatabase(name));

const ONE_LINE = (service: string, port: number, hint: string) =>
  new RegExp(`^Keel cannot start: ${service} is not reachable at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)\\. Start it with \`docker compose up -d postgres redis\`, or on Debian \`${hint}\`\\.\\n$`);

test.each([
  ['Redis', 'REDIS_URL', (port: number) => `redis://127.0.0.1:${port}`, 'redis-server --daemonize yes'],
  ['PostgreSQL', 'DATABASE_URL', (port: number) => `postgres://postgres:secret-password@127.0.0.1:${port}/keel`, 'pg_ctlcluster <version> main start'],
])('keel start with %s unreachable exits non-zero at once with one line naming it and how to start it', async (service, variable, url, hint) => {
  const port = await freePort();
  const run = await runKeel(['start', '--roles', 'api'], { DATABASE_URL: databaseUrl, [variable]: url(port), CORE_PORT: '0', PRO_PORT: '0' });

  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(ONE_LINE(service, port, hint.replace(/[<>]/g, '\\$&')));
  expect(run.stderr).not.toContain('secret-password');
  // Beyond loading the sources, Keel itself gives up within the 10 s promised (its own limit is 4 s; the rest is this shared machine's slack).
  expect(run.ms - loadMs).toBeLessThan(10_000);
});

test('keel start with a PostgreSQL that refuses the login (a role it does not know) exits non-zero with one line saying so and how to let Keel in', async () => {
  const url = new URL(databaseUrl);
  url.username = `no_such_role_${randomBytes(3).toString('hex')}`;
  url.password = 'secret-password';
  const run = await runKeel(['start', '--roles', 'api'], { DATABASE_URL: url.toString(), CORE_PORT: '0', PRO_PORT: '0' });

  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^Keel cannot start: PostgreSQL at 127\.0\.0\.1:5432 refuses the login \(role "no_such_role_[0-9a-f]+" does not exist\)\. Put the role's password in DATABASE_URL .*pg_hba\.conf.*\n$/);
  expect(run.stderr).not.toContain('secret-password');
});
