import { createHash } from 'node:crypto';
// knex ships no types for its dialect classes; this is the client `client: 'pg'` resolves to.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const KnexPgClient: new (config: object) => object = require('knex/lib/dialects/postgres');

/** Most named statements one pooled connection keeps; past it, new SQL runs unnamed. */
export const MAX_PREPARED_PER_CONNECTION = 500;
/**
 * Statements with more bindings are batch writes whose text changes with the batch size: naming
 * them would only fill the connection's statement cache with plans used once.
 */
export const MAX_BINDINGS_TO_PREPARE = 100;

interface PgConnection {
  parsedStatements: Record<string, string>;
}

interface KnexQueryObject {
  sql: string;
  bindings?: unknown[];
  options?: { name?: string };
}

const names = new Map<string, string>();

/** A statement name derived from the SQL text, so every connection agrees on it. */
export function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    if (names.size >= 10_000) names.clear();
    name = `k${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}

const namedCount = new WeakMap<PgConnection, number>();

/**
 * The knex PostgreSQL client, but each parameterised statement is sent as a named prepared
 * statement: PostgreSQL parses and plans it once per connection instead of on every call.
 * On this machine that halves PostgreSQL's CPU per query (see README, Performance).
 * Statements without bindings (migrations, multi-statement raw SQL) and large batches run as before.
 */
export class PreparingPgClient extends (KnexPgClient as new (config: object) => { _query(connection: unknown, obj: KnexQueryObject): Promise<unknown> }) {
  override _query(connection: unknown, obj: KnexQueryObject): Promise<unknown> {
    if (obj.bindings?.length && obj.bindings.length <= MAX_BINDINGS_TO_PREPARE && !obj.options?.name) {
      const pg = (connection as { connection?: PgConnection }).connection;
      if (pg?.parsedStatements) {
        const name = statementName(obj.sql);
        const known = pg.parsedStatements[name] !== undefined;
        const count = namedCount.get(pg) ?? 0;
        if (known || count < MAX_PREPARED_PER_CONNECTION) {
          if (!known) namedCount.set(pg, count + 1);
          obj.options = { ...obj.options, name };
        }
      }
    }
    return super._query(connection, obj);
  }
}
