import { forEachBounded } from '../../../src/platform/bounded';

test('forEachBounded runs every item once, never more than the limit at a time', async () => {
  let running = 0;
  let most = 0;
  const seen: number[] = [];
  const items = Array.from({ length: 30 }, (_, i) => i);
  await forEachBounded(items, 8, async (i) => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setImmediate(r));
    seen.push(i);
    running--;
  });
  expect(seen.sort((a, b) => a - b)).toEqual(items);
  expect(most).toBe(8);
});

test('forEachBounded rejects with the first error', async () => {
  const failing = forEachBounded([1, 2, 3], 2, async (i) => {
    if (i === 2) throw new Error('two');
  });
  await expect(failing).rejects.toThrow('two');
});
