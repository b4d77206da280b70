import { Knex } from 'knex';

/**
 * What each trade's insert checks and indexes beyond what its reads need (issue 37). The order
 * book's group statement writes a trade only between orders it inserts in that statement or that
 * its market's runtime loaded from this table, in the market whose sequence the same statement
 * moves (that part fails without the market's row), and Keel never deletes an order or a market:
 * the three foreign keys re-proved that per trade, each a lookup and a row lock on the order or the
 * market at the end of the statement. The settlement key is a bigserial: unique by construction,
 * and every lookup by it goes through the queue's partial index (migration 025) or a batch's few
 * trades, so its unique index was one more entry on every insert and settlement rewrite.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE trades DROP CONSTRAINT trades_maker_order_id_fkey;
    ALTER TABLE trades DROP CONSTRAINT trades_taker_order_id_fkey;
    ALTER TABLE trades DROP CONSTRAINT trades_market_id_fkey;
    DROP INDEX trades_settlement_key_idx;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE UNIQUE INDEX trades_settlement_key_idx ON trades (settlement_key);
    ALTER TABLE trades ADD CONSTRAINT trades_market_id_fkey FOREIGN KEY (market_id) REFERENCES markets (id);
    ALTER TABLE trades ADD CONSTRAINT trades_taker_order_id_fkey FOREIGN KEY (taker_order_id) REFERENCES orders (id);
    ALTER TABLE trades ADD CONSTRAINT trades_maker_order_id_fkey FOREIGN KEY (maker_order_id) REFERENCES orders (id);
  `);
}
