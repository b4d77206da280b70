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
function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    if (names.size >= 10_000) names.clear();
    name = `k${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}

const namedCount = new WeakMap<PgConnection, number>();
/** Statements a schema change made unusable on a connection; they run unnamed there from then on. */
const staleNames = new WeakMap<PgConnection, Set<string>>();

function isStalePlan(e: unknown): boolean {
  return (e as { code?: string }).code === '0A000' && /cached plan must not change result type/.test(String((e as Error).message));
}

/**
 * The knex PostgreSQL client, but each parameterised statement is sent as a named prepared
 * statement: PostgreSQL parses and plans it once per connection instead of on every call.
 * On this machine that halves PostgreSQL's CPU per query.
 * Statements without bindings (migrations, multi-statement raw SQL) and large batches run as before.
 */
export class PreparingPgClient extends (KnexPgClient as new (config: object) => { _query(connection: unknown, obj: KnexQueryObject): Promise<unknown> }) {
  override _query(connection: unknown, obj: KnexQueryObject): Promise<unknown> {
    const pg = (connection as { connection?: PgConnection }).connection;
    const name = pg?.parsedStatements && obj.bindings?.length && obj.bindings.length <= MAX_BINDINGS_TO_PREPARE && !obj.options?.name ? this.nameFor(pg, obj.sql) : undefined;
    if (!name) return super._query(connection, obj);
    return super._query(connection, { ...obj, options: Object.assign({}, obj.options, { name }) }).catch((e: unknown) => {
      // A migration changed a table under a prepared `SELECT *`: PostgreSQL refuses that plan for
      // good, so this connection stops naming the statement, and the query runs again unnamed
      // unless a transaction (now aborted) holds the connection.
      if (!isStalePlan(e)) throw e;
      const stale = staleNames.get(pg!) ?? new Set<string>();
      stale.add(name);
      staleNames.set(pg!, stale);
      if ((connection as { __knexTxId?: string }).__knexTxId) throw e;
      return super._query(connection, obj);
    });
  }

  private nameFor(pg: PgConnection, sql: string): string | undefined {
    const name = statementName(sql);
    if (staleNames.get(pg)?.has(name)) return undefined;
    if (pg.parsedStatements[name] !== undefined) return name;
    const count = namedCount.get(pg) ?? 0;
    if (count >= MAX_PREPARED_PER_CONNECTION) return undefined;
    namedCount.set(pg, count + 1);
    return name;
  }
}
