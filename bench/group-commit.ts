import { Pool } from 'pg';

/**
 * The orders yardsticks' durable write: each order stored as one jsonb row, group-committed (every
 * order that arrives while a commit runs goes into the next one, a single multi-row INSERT).
 * Resolves with the row's id once its commit is done.
 */
export async function groupCommittedOrders(pool: Pool): Promise<(body: unknown) => Promise<string>> {
  await pool.query('CREATE TABLE IF NOT EXISTS floor_orders (id bigserial PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  let waiting: { body: unknown; done: (id: string) => void; failed: (e: unknown) => void }[] = [];
  let committing = false;
  const commitWaiting = async (): Promise<void> => {
    committing = true;
    while (waiting.length) {
      const group = waiting;
      waiting = [];
      try {
        const { rows } = await pool.query({
          name: 'insert-orders',
          text: 'INSERT INTO floor_orders (body) SELECT unnest($1::jsonb[]) RETURNING id',
          values: [group.map((o) => JSON.stringify(o.body))],
        });
        group.forEach((o, i) => o.done(String(rows[i].id)));
      } catch (e) {
        group.forEach((o) => o.failed(e));
      }
    }
    committing = false;
  };
  return (body) =>
    new Promise<string>((done, failed) => {
      waiting.push({ body, done, failed });
      if (!committing) void commitWaiting();
    });
}
