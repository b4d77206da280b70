import { Knex } from 'knex';

/**
 * Batches waiting to be sent go in the order of their trades (the first trade's settlement key), not
 * of their creation: a failed batch's halves are created together, and later than batches that came
 * after it. A trade may spend what an earlier trade brought the wallet, so sent out of order it fails
 * alone, for good. Filled for the batches not final (the only ones ordered).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE settlement_batches ADD COLUMN first_settlement_key bigint');
  await knex.raw(
    `UPDATE settlement_batches b SET first_settlement_key = (SELECT min(t.settlement_key) FROM trades t WHERE t.id = ANY(b.trade_ids))
      WHERE b.status NOT IN ('CONFIRMED', 'FAILED')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE settlement_batches DROP COLUMN first_settlement_key');
}
