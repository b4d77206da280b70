import { Knex } from 'knex';

/**
 * market_book_sequences: per market, the number of book messages (changes of its price levels)
 * committed so far. The group commit that changes a market's levels moves it by exactly one in
 * the same statement, compare-and-set (`OrderPersistence` / `bookSequencePart`), so the sequence a
 * realtime book message carries is the one PostgreSQL holds, whichever node committed it. A book
 * snapshot reads it in the same statement as the open orders it sums.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE market_book_sequences (
      market_id uuid PRIMARY KEY REFERENCES markets(id) ON DELETE CASCADE,
      sequence bigint NOT NULL DEFAULT 0 CHECK (sequence >= 0)
    );
    INSERT INTO market_book_sequences (market_id, sequence) SELECT id, 0 FROM markets;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS market_book_sequences`);
}
