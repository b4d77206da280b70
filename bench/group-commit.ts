import { Pool } from 'pg';

/**
 * Group commit: every item that arrives while a commit runs goes into the next one, committed by
 * `commit` (one statement for the group), which answers each item in order. Resolves each item with
 * its answer once its group's commit is done.
 */
export function groupCommitted<T, R>(commit: (group: T[]) => Promise<R[]>): (item: T) => Promise<R> {
  let waiting: { item: T; done: (answer: R) => void; failed: (e: unknown) => void }[] = [];
  let committing = false;
  const commitWaiting = async (): Promise<void> => {
    committing = true;
    while (waiting.length) {
      const group = waiting;
      waiting = [];
      try {
        const answers = await commit(group.map((o) => o.item));
        group.forEach((o, i) => o.done(answers[i]));
      } catch (e) {
        group.forEach((o) => o.failed(e));
      }
    }
    committing = false;
  };
  return (item) =>
    new Promise<R>((done, failed) => {
      waiting.push({ item, done, failed });
      if (!committing) void commitWaiting();
    });
}

/**
 * The orders yardsticks' durable write: each order stored as one jsonb row, group-committed (a
 * single multi-row INSERT per group). Resolves with the row's id once its commit is done.
 */
export async function groupCommittedOrders(pool: Pool): Promise<(body: unknown) => Promise<string>> {
  await pool.query('CREATE TABLE IF NOT EXISTS floor_orders (id bigserial PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  return groupCommitted(async (bodies: unknown[]) => {
    const { rows } = await pool.query({
      name: 'insert-orders',
      text: 'INSERT INTO floor_orders (body) SELECT unnest($1::jsonb[]) RETURNING id',
      values: [bodies.map((b) => JSON.stringify(b))],
    });
    return rows.map((r: { id: string }) => String(r.id));
  });
}
