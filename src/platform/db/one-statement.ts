import type { Knex } from 'knex';

/** One write of a composed statement: a named data-modifying CTE; later parts may refer to earlier names. */
export interface StatementPart {
  name: string;
  sql: string;
  bindings: readonly unknown[];
}

/** A knex builder or raw as a part, with knex `?` placeholders. */
export function part(name: string, query: Knex.QueryBuilder | Knex.Raw): StatementPart {
  const { sql, bindings } = query.toSQL();
  return { name, sql, bindings };
}

/**
 * Runs several writes as a single SQL statement (`WITH a AS (...), b AS (...) SELECT 1`).
 * A statement is atomic on its own, so this needs no BEGIN and COMMIT: one round trip instead of
 * one per write plus two. Every part sees the same snapshot, so parts must not depend on each
 * other's effects except through the rows a part RETURNs to a later one.
 */
export async function runAsOneStatement(db: Knex, parts: StatementPart[]): Promise<void> {
  if (parts.length === 0) return;
  const sql = `WITH ${parts.map((p) => `${p.name} AS (${p.sql})`).join(',\n')}\nSELECT 1`;
  await db.raw(sql, parts.flatMap((p) => p.bindings) as Knex.RawBinding[]);
}
