import type { Knex } from 'knex';
import { snakeCaseMappers } from 'objection';

/** One write of a composed statement: a named data-modifying CTE; later parts may refer to earlier names. */
export interface StatementPart {
  name: string;
  sql: string;
  bindings: readonly unknown[];
  /** The whole statement fails (StatementCheckFailed) unless this part RETURNs exactly this many rows. */
  expectRows?: number;
}

/** A composed statement was refused because a part touched other rows than it required; nothing was written. */
export class StatementCheckFailed extends Error {
  constructor(readonly part: string) {
    super(`Statement refused: ${part} did not touch the rows it required`);
  }
}

/** A knex builder or raw as a part, with knex `?` placeholders. */
export function part(name: string, query: Knex.QueryBuilder | Knex.Raw): StatementPart {
  const { sql, bindings } = query.toSQL();
  return { name, sql, bindings };
}

const toColumns = snakeCaseMappers().format;
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** A property's column name, as the ORM maps it; each name is mapped once. */
const columnNames = new Map<string, string>();
function columnOf(key: string): string {
  let column = columnNames.get(key);
  if (column === undefined) columnNames.set(key, (column = Object.keys(toColumns({ [key]: null }) as object)[0]));
  return column;
}

/**
 * The rows as the json text rowsOf binds: keys mapped to columns and each Date written as the ISO
 * text JSON.stringify would give it, converted here once per Date object rather than by
 * JSON.stringify's slow path for every row (a group's rows share their timestamps).
 */
function rowsJson(rows: object[]): string {
  const isoOf = new Map<Date, string | null>();
  const mapped = rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(row)) {
      let value = (row as Record<string, unknown>)[key];
      if (value instanceof Date) {
        let iso = isoOf.get(value);
        // toJSON, as JSON.stringify would call it: ISO text, or null for an invalid Date.
        if (iso === undefined) isoOf.set(value, (iso = value.toJSON()));
        value = iso;
      }
      out[columnOf(key)] = value;
    }
    return out;
  });
  return JSON.stringify(mapped);
}

/**
 * Rows as a relation of `table`'s row type, to read from in a part: the rows travel as one json
 * binding, so the part's text is the same whatever their number. PostgreSQL then parses and plans
 * it once per connection (a prepared statement) instead of a new statement of thousands of bindings
 * for every group. Keys are column names, camelCase mapped as the ORM maps it; a key a row lacks
 * reads as NULL. Values go through JSON: pass bigint and exact decimals as strings.
 */
export function rowsOf(table: string, rows: object[]): { sql: string; bindings: [string] } {
  if (!IDENTIFIER.test(table)) throw new Error(`Table name '${table}' must be a lower-case SQL identifier`);
  // json, not jsonb: jsonb's input builds and sorts a binary document first, which costs twice the whole population (measured: 52 µs against 21 µs an order row).
  return { sql: `json_populate_recordset(NULL::${table}, ?::json)`, bindings: [rowsJson(rows)] };
}

/**
 * Inserts rows through rowsOf. The columns written are `keys` (property names), or the first row's
 * keys; the others take their defaults. With `keys`, rows may be none: the part's text is then the
 * same for any number of rows, so a statement that always carries it is prepared once.
 */
export function insertRowsPart(name: string, table: string, rows: object[], keys?: readonly string[]): StatementPart {
  if (rows.length === 0 && !keys) throw new Error(`${name}: no rows to insert`);
  const columns = (keys ?? Object.keys(rows[0])).map(columnOf);
  for (const c of columns) if (!IDENTIFIER.test(c)) throw new Error(`${name}: column '${c}' must be a lower-case SQL identifier`);
  const source = rowsOf(table, rows);
  return { name, sql: `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM ${source.sql}`, bindings: source.bindings };
}

/**
 * Runs several writes as a single SQL statement (`WITH a AS (...), b AS (...) SELECT 1`).
 * A statement is atomic on its own, so this needs no BEGIN and COMMIT: one round trip instead of
 * one per write plus two. Every part sees the same snapshot, so parts must not depend on each
 * other's effects except through the rows a part RETURNs to a later one.
 */
export async function runAsOneStatement(db: Knex, parts: StatementPart[]): Promise<void> {
  if (parts.length === 0) return;
  for (const p of parts) if (!IDENTIFIER.test(p.name)) throw new Error(`Statement part name '${p.name}' must be a lower-case SQL identifier`);
  const checks = parts.filter((p) => p.expectRows !== undefined);
  // keel_assert is migration 007's: it raises KL001 with the part's name.
  // The counts are bindings, not text: the statement's text then does not change with them (each new text is parsed and planned anew).
  const last = checks.length ? `SELECT ${checks.map((p) => `keel_assert((SELECT count(*) FROM ${p.name}) = ?::bigint, '${p.name}')`).join(', ')}` : 'SELECT 1';
  const sql = `WITH ${parts.map((p) => `${p.name} AS (${p.sql})`).join(',\n')}\n${last}`;
  try {
    await db.raw(sql, [...parts.flatMap((p) => p.bindings), ...checks.map((p) => Number(p.expectRows))] as Knex.RawBinding[]);
  } catch (e) {
    if ((e as { code?: string }).code === 'KL001') throw new StatementCheckFailed(String((e as Error).message));
    throw e;
  }
}
