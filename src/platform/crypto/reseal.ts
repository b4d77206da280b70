import type { Knex } from 'knex';
import type { SecretBox } from './secret-box';

/** A column of sealed secrets: its table, the column, and the column its secrets are bound to (property names). */
export interface SealedColumn {
  table: string;
  column: string;
  boundBy: string;
}

const BATCH = 500;

/**
 * Re-seals every secret of the column that is not under the current key, row by row, each one a
 * compare-and-set on the sealed text (a row changed meanwhile is left to the next run). Safe to
 * run while Keel serves and to run again after a crash: what is done stays done. `onPage` hears
 * the running counts after each page (the command line's progress).
 */
export async function resealColumn(db: Knex, box: SecretBox, spec: SealedColumn, onPage?: (scanned: number, resealed: number) => void): Promise<number> {
  let resealed = 0;
  let scanned = 0;
  let after: string | null = null;
  for (;;) {
    const page: Record<string, string>[] = await db(spec.table)
      .select('id', spec.boundBy, spec.column)
      .modify((q) => (after === null ? q : q.where('id', '>', after)))
      .orderBy('id')
      .limit(BATCH);
    if (!page.length) return resealed;
    for (const row of page) {
      const sealed = row[spec.column];
      if (!box.sealedUnderOtherKey(sealed)) continue;
      const boundTo = String(row[spec.boundBy]);
      resealed += await db(spec.table)
        .where({ id: row.id, [spec.column]: sealed })
        .update({ [spec.column]: box.seal(box.open(sealed, boundTo), boundTo) });
    }
    after = page[page.length - 1].id;
    scanned += page.length;
    onPage?.(scanned, resealed);
  }
}
