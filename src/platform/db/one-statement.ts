import type { Knex } from 'knex';

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

/**
 * Runs several writes as a single SQL statement (`WITH a AS (...), b AS (...) SELECT 1`).
 * A statement is atomic on its own, so this needs no BEGIN and COMMIT: one round trip instead of
 * one per write plus two. Every part sees the same snapshot, so parts must not depend on each
 * other's effects except through the rows a part RETURNs to a later one.
 */
export async function runAsOneStatement(db: Knex, parts: StatementPart[]): Promise<void> {
  if (parts.length === 0) return;
  for (const p of parts) if (!/^[a-z_]+$/.test(p.name)) throw new Error(`Statement part name '${p.name}' must be lower-case letters and underscores`);
  const checks = parts.filter((p) => p.expectRows !== undefined);
  // keel_assert is migration 007's: it raises KL001 with the part's name.
  const last = checks.length ? `SELECT ${checks.map((p) => `keel_assert((SELECT count(*) FROM ${p.name}) = ${Number(p.expectRows)}, '${p.name}')`).join(', ')}` : 'SELECT 1';
  const sql = `WITH ${parts.map((p) => `${p.name} AS (${p.sql})`).join(',\n')}\n${last}`;
  try {
    await db.raw(sql, parts.flatMap((p) => p.bindings) as Knex.RawBinding[]);
  } catch (e) {
    if ((e as { code?: string }).code === 'KL001') throw new StatementCheckFailed(String((e as Error).message));
    throw e;
  }
}
