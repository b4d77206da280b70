import { Knex } from 'knex';

/**
 * keel_update_order_states(changes json): the order book's group commit writes each touched
 * order's new state with it (issue 37), one primary-key UPDATE per row. As one set-based UPDATE
 * joined to the json rows, the plan a pooled connection cached while the orders table was small
 * read the whole table on every commit (a sequential scan, chosen while it was the cheaper; a
 * cached plan is only made again when the table's statistics change, and nothing analyses it
 * without autovacuum): 2.5 ms a group at 10,000 orders, growing with the table. An UPDATE by its
 * key alone is an index lookup at any size, so the plan PL/pgSQL keeps for it is right whatever
 * the table held when it was made. Returns the number of rows given.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION keel_update_order_states(changes json) RETURNS integer
    LANGUAGE plpgsql AS $$
    DECLARE
      v record;
      n integer := 0;
    BEGIN
      FOR v IN SELECT * FROM json_populate_recordset(NULL::orders, changes) LOOP
        UPDATE orders
           SET remaining_lots = v.remaining_lots, filled_lots = v.filled_lots, filled_notional = v.filled_notional, fees_paid = v.fees_paid,
               status = v.status, status_reason = v.status_reason, locked_amount = v.locked_amount, rest_sequence = v.rest_sequence, updated_at = v.updated_at
         WHERE id = v.id;
        n := n + 1;
      END LOOP;
      RETURN n;
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS keel_update_order_states(json)');
}
