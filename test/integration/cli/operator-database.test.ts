import { Client } from 'pg';
import { createTestDatabase, databaseUrl, dropTestDatabase, runPrefix, withAdmin } from '../../support/databases';
import { runKeel } from '../../support/keel-process';

const MACHINE_REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const migrated = `${runPrefix()}_opdb_${process.pid}`;
const empty = `${runPrefix()}_opdb_empty_${process.pid}`;
const newer = `${runPrefix()}_opdb_newer_${process.pid}`;
const mistyped = `${runPrefix()}_opdb_typo_${process.pid}`;

/** The URL of `name` with a password in it: the refusals must not print it. */
function withPassword(name: string): string {
  const url = new URL(databaseUrl(name));
  url.password = 'secret-db-password';
  return url.toString();
}
const env = (database: string) => ({ KEEL_CHAINS: process.env.KEEL_CHAINS!, KEEL_MASTER_KEY: process.env.KEEL_MASTER_KEY!, DATABASE_URL: withPassword(database), REDIS_URL: MACHINE_REDIS, LOG_LEVEL: 'silent' });
async function query(name: string, sql: string): Promise<unknown[]> {
  const db = new Client({ connectionString: databaseUrl(name) });
  await db.connect();
  try {
    return (await db.query(sql)).rows;
  } finally {
    await db.end();
  }
}
const exists = (name: string) => withAdmin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);

beforeAll(async () => {
  await createTestDatabase(migrated);
  await createTestDatabase(newer);
  await withAdmin((c) => c.query(`CREATE DATABASE "${empty}"`));
  // A newer Keel applied a migration this build does not know.
  await query(newer, "INSERT INTO knex_migrations (name, batch, migration_time) VALUES ('999_from_a_newer_keel', 99, now())");
});
afterAll(async () => {
  for (const name of [migrated, empty, newer, mistyped]) await dropTestDatabase(name);
});

test('an operator command on a database that does not exist exits 1 with one line naming it and `keel migrate`, and does not create it', async () => {
  const { code, stdout, stderr } = await runKeel(['reconcile', '--json'], env(mistyped), 60_000);
  expect(stderr.trim()).toBe(`Database "${mistyped}" at 127.0.0.1:5432 does not exist. Run \`keel migrate\` to create and migrate it.`);
  expect(stdout).toBe('');
  expect(code).toBe(1);
  expect(await exists(mistyped)).toBe(false);
});

test('an operator command on a database behind this build (not migrated) is refused and migrates nothing', async () => {
  const { code, stderr } = await runKeel(['aml', 'lists'], env(empty), 60_000);
  expect(stderr.trim()).toMatch(new RegExp(`^Database "${empty}" at 127\\.0\\.0\\.1:5432 is not migrated to this build \\(\\d+ pending, from 001_foundation\\)\\. Run \`keel migrate\` first\\.$`));
  expect(stderr).not.toContain('secret-db-password');
  expect(code).toBe(1);
  expect(await query(empty, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual([]);
});

test('an operator command on a database a newer Keel migrated is refused, naming the migrations it does not know', async () => {
  const { code, stderr } = await runKeel(['aml', 'lists'], env(newer), 60_000);
  expect(stderr.trim()).toBe(`Database "${newer}" at 127.0.0.1:5432 has migrations this build does not know (999_from_a_newer_keel). A newer Keel migrated it: run that version, or a newer one.`);
  expect(code).toBe(1);
});

test('on a database at this build\'s migration level the command runs', async () => {
  const { code, stdout } = await runKeel(['aml', 'lists'], env(migrated), 60_000);
  expect(JSON.parse(stdout)).toMatchObject({ lists: expect.any(Array) });
  expect(code).toBe(0);
});
