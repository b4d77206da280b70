import { Knex } from 'knex';

/**
 * An agent payment an administrator approved counts against its agent's rolling window from its
 * approval (decided_at), not from its request: the window sums read, beside the payments requested
 * in the window (agent_payments_agent_idx), those decided in it, here the few that were held.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX agent_payments_decided_idx ON agent_payments (agent_id, decided_at) WHERE decided_at IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX agent_payments_decided_idx');
}
