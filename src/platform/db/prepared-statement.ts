import type { Knex } from 'knex';

interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/** The parts of knex's client that lend out its pooled connections. */
interface PoolingClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

/**
 * SQL written once, for a hot read whose shape is fixed: run as a named prepared statement on a
 * connection of knex's pool (the same pool, timeouts and errors as every query), with no query
 * building and no identifier mapping; its columns name themselves as the rows should (`AS
 * "organizationId"`). The text must never change after a migration made it stale (explicit
 * columns, no `SELECT *`), since PostgreSQL keeps the plan per connection.
 */
export class PreparedStatement<Row> {
  constructor(
    private readonly name: string,
    private readonly text: string,
  ) {}

  async rows(db: Knex, values: unknown[]): Promise<Row[]> {
    const client = db.client as unknown as PoolingClient;
    const connection = await client.acquireConnection();
    try {
      return (await connection.query({ name: this.name, text: this.text, values })).rows as Row[];
    } finally {
      await client.releaseConnection(connection);
    }
  }
}
