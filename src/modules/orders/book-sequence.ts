import type { Knex } from 'knex';
import type { StatementPart } from '../../platform/db/one-statement';

/**
 * The market's book sequence (migration 021): how many book messages (commits that changed its
 * price levels) it has had. Read when a runtime is loaded; moved by one, compare-and-set, by the
 * statement of each commit that changes levels, so a runtime that missed another writer's commit
 * has its statement refused (and is rebuilt) rather than reusing a number.
 */
export async function readBookSequence(db: Knex, marketId: string): Promise<number> {
  const row = await db('market_book_sequences').where({ marketId }).first('sequence');
  return row ? Number(row.sequence) : 0;
}

export function bookSequencePart(marketId: string, from: number, to: number): StatementPart {
  return {
    name: 'book_sequence',
    sql: `INSERT INTO market_book_sequences AS s (market_id, sequence) VALUES (?, ?)
          ON CONFLICT (market_id) DO UPDATE SET sequence = EXCLUDED.sequence WHERE s.sequence = ?
          RETURNING s.market_id`,
    bindings: [marketId, String(to), String(from)],
    expectRows: 1,
  };
}
