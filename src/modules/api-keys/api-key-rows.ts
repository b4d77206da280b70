import type { Knex } from 'knex';
import type { ApiKeyHost } from './api-key.domain';

/** An API key's label as usage reports show it. */
export interface ApiKeyLabel {
  name: string;
  host: ApiKeyHost;
}

/** The names and hosts of these API keys, by id (keys no longer stored are absent): the api_keys table is this module's. */
export async function apiKeyLabels(db: Knex | Knex.Transaction, ids: string[]): Promise<Map<string, ApiKeyLabel>> {
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  const rows: { id: string; name: string; host: ApiKeyHost }[] = await db('api_keys').whereIn('id', unique).select('id', 'name', 'host');
  return new Map(rows.map((r) => [r.id, { name: r.name, host: r.host }]));
}

/**
 * A correlated subquery for the prefix of the newest API key of the agent whose id is in
 * `agentIdColumn` of the caller's query (e.g. 'a.id'): one query, no extra round trip.
 */
export function newestAgentKeyPrefix(db: Knex | Knex.Transaction, agentIdColumn: string): Knex.QueryBuilder {
  return db('api_keys as k').where('k.agent_id', db.ref(agentIdColumn)).orderBy('k.createdAt', 'desc').limit(1).select('k.prefix');
}
