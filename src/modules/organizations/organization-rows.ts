import type { Knex } from 'knex';

/**
 * Sets an organisation's monthly request quota (null: back to its tier's); false when no
 * organisation has this id. The organizations table is this module's.
 */
export async function setMonthlyQuota(db: Knex | Knex.Transaction, organizationId: string, requests: number | null): Promise<boolean> {
  const updated = await db('organizations').where({ id: organizationId }).update({ monthlyQuota: requests, updatedAt: new Date() });
  return updated > 0;
}
