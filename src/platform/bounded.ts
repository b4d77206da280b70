/**
 * `work` over every item with at most `limit` running at once (a small pool: `limit` runners each
 * take the next item); resolves when all are done, rejects with the first error.
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runner = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, runner));
}
