import { Client } from 'pg';

export const TEST_SERVER_URL = process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432';
export const RUN_PREFIX_ENV = 'KEEL_TEST_RUN_PREFIX';

/** `keel_test_<jest pid>`: set by the global setup, inherited by the workers. */
export function runPrefix(): string {
  return process.env[RUN_PREFIX_ENV] ?? `keel_test_${process.pid}`;
}

export function templateDb(): string {
  return `${runPrefix()}_template`;
}

export function databaseUrl(name: string): string {
  return `${TEST_SERVER_URL}/${name}`;
}

export async function withAdmin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh database per test file, copied from the migrated template (fast, isolated). */
export async function createTestDatabase(name: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      await withAdmin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${templateDb()}"`));
      return databaseUrl(name);
    } catch (e) {
      // Two files copying the template at the same moment: PostgreSQL refuses one; try again.
      if ((e as { code?: string }).code !== '55006' || attempt > 50) throw e;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
}

export async function dropTestDatabase(name: string): Promise<void> {
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
