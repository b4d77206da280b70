import knexFactory, { Knex } from 'knex';
import { knexSnakeCaseMappers, Model } from 'objection';
import { Client } from 'pg';
import { migrationSource } from './migrations';
import type { MigrationContext } from './migrations/context';
import { PreparingPgClient } from './preparing-pg-client';
import type { Logger } from '../logger';
import { loggedError } from '../logged-error';
import { endpoint } from '../dependency-unreachable';

export type Db = Knex;

/**
 * NUMERIC and BIGINT stay strings: money is never a JavaScript number. A query that cannot get a
 * connection within `acquireTimeoutMs` (PostgreSQL down, pool exhausted) fails with KnexTimeoutError
 * instead of waiting; connections that broke are dropped by the pool and replaced on demand.
 * With `logger`, knex's own warnings (a connection that broke, one that could not be acquired) go to
 * the structured log instead of the console, URLs in them cut to their origin (`loggedError`).
 */
export function createDb(databaseUrl: string, poolMax = 20, opts: { preparedStatements?: boolean; acquireTimeoutMs?: number; logger?: Logger } = {}): Db {
  const { logger } = opts;
  const db = knexFactory({
    client: opts.preparedStatements === false ? 'pg' : (PreparingPgClient as unknown as typeof Knex.Client),
    connection: databaseUrl,
    acquireConnectionTimeout: opts.acquireTimeoutMs ?? 60_000,
    pool: { min: 0, max: poolMax },
    ...(logger
      ? {
          log: {
            warn: (message: unknown) => logger.warn({ knex: loggedError(String(message)) }, 'database client warning'),
            error: (message: unknown) => logger.error({ knex: loggedError(String(message)) }, 'database client error'),
            deprecate: (message: unknown) => logger.warn({ knex: loggedError(String(message)) }, 'database client deprecation'),
          },
        }
      : {}),
    ...knexSnakeCaseMappers(),
  });
  Model.knex(db);
  return db;
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string, connectTimeoutMs = 10_000): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`Unsupported database name in DATABASE_URL: ${name}`);
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: connectTimeoutMs });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } catch (e) {
        if (!createdByAnother(e)) throw e;
      }
    }
  } finally {
    await client.end();
  }
}

/**
 * Another node created the database between our check and create: PostgreSQL says it exists
 * (42P04), or, when both creates ran at the same moment, that its name broke pg_database's unique index.
 */
function createdByAnother(e: unknown): boolean {
  const err = e as { code?: string; constraint?: string };
  return err.code === '42P04' || (err.code === '23505' && err.constraint === 'pg_database_datname_index');
}

/** The session advisory lock every node takes to migrate (docs/operating-keel.md names it for operators). */
export const MIGRATION_LOCK_KEY = 'keel:migrations';

/**
 * Applies the pending migrations, one node at a time: nodes starting together on a fresh database
 * wait for the one holding the advisory lock, then find nothing pending. knex's own lock cannot do
 * this alone, since it creates its tables (knex_migrations, knex_migrations_lock) outside it. The
 * lock is held on a connection of its own, outside the pool the migrations use, and ends with it.
 */
export async function migrate(db: Db, context: MigrationContext = {}): Promise<string[]> {
  const lock = await db.client.acquireRawConnection();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [MIGRATION_LOCK_KEY]);
    const [, applied] = await db.migrate.latest({ migrationSource: migrationSource(context) });
    return applied as string[];
  } finally {
    await db.client.destroyRawConnection(lock);
  }
}

/**
 * A database that is missing or not at this build's migration level (migrations pending, or ones a
 * newer Keel applied): what a process that does not migrate refuses to work on. Its message is one
 * line naming the database (never the password) and what to run.
 */
export class DatabaseNotReady extends Error {
  constructor(databaseUrl: string, problem: string, fix = 'Run `keel migrate` first.') {
    super(`Database "${databaseName(databaseUrl)}" at ${endpoint(databaseUrl)} ${problem}. ${fix}`);
    this.name = 'DatabaseNotReady';
  }
}

function databaseName(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
}

/** Where a database stands against this build's migrations. */
export interface MigrationState {
  /** False when knex's knex_migrations table is not there: nothing was ever migrated. */
  migrated: boolean;
  applied: string[];
  /** This build's migrations not applied, in order. */
  pending: string[];
  /** Applied migrations this build does not know (a newer Keel applied them). */
  unknown: string[];
}

/**
 * Reads which migrations a database has applied, creating and changing nothing: knex's migrator
 * (`migrate.list`, `migrate.status`) would first create its knex_migrations and
 * knex_migrations_lock tables. Throws what PostgreSQL throws (3D000 for a missing database).
 */
export async function readMigrationState(db: Db): Promise<MigrationState> {
  const { rows: [table] } = await db.raw<{ rows: { found: boolean }[] }>("SELECT to_regclass('knex_migrations') IS NOT NULL AS found");
  const applied = table.found ? (await db.raw<{ rows: { name: string }[] }>('SELECT name FROM knex_migrations ORDER BY id')).rows.map((r) => r.name) : [];
  const known = await migrationSource().getMigrations([]);
  return { migrated: table.found, applied, pending: known.filter((name) => !applied.includes(name)), unknown: applied.filter((name) => !known.includes(name)) };
}

/**
 * Refuses (DatabaseNotReady) a database that does not exist or whose applied migrations are not
 * exactly this build's; creates and changes nothing, not even knex's own tables.
 */
export async function requireMigrated(db: Db, databaseUrl: string): Promise<void> {
  let state: MigrationState;
  try {
    state = await readMigrationState(db);
  } catch (error) {
    // 3D000: no such database.
    const code = (error as { code?: string }).code ?? (error as { nativeError?: { code?: string } }).nativeError?.code;
    if (code === '3D000') throw new DatabaseNotReady(databaseUrl, 'does not exist', 'Run `keel migrate` to create and migrate it.');
    throw error;
  }
  const { unknown, pending } = state;
  if (unknown.length) {
    throw new DatabaseNotReady(databaseUrl, `has migrations this build does not know (${unknown.join(', ')})`, 'A newer Keel migrated it: run that version, or a newer one.');
  }
  if (pending.length) throw new DatabaseNotReady(databaseUrl, `is not migrated to this build (${pending.length} pending, from ${pending[0]})`);
}
