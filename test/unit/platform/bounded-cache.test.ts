import { BoundedCache } from '../../../src/platform/bounded-cache';

describe('BoundedCache', () => {
  test('evicts the least recently used entries to stay within its bytes', () => {
    const cache = new BoundedCache<string>({ maxEntries: 10, maxBytes: 100 });
    cache.set('a', 'A', 40);
    cache.set('b', 'B', 40);
    expect(cache.get('a')).toBe('A'); // now b is the least recently used
    cache.set('c', 'C', 40);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual(['A', undefined, 'C']);
    expect(cache.bytes).toBe(80);
  });

  test('evicts the least recently used entries to stay within its entries', () => {
    const cache = new BoundedCache<number>({ maxEntries: 2, maxBytes: 1_000 });
    for (let i = 0; i < 5; i++) cache.set(String(i), i, 1);
    expect(cache.size).toBe(2);
    expect([cache.get('3'), cache.get('4'), cache.get('0')]).toEqual([3, 4, undefined]);
  });

  test('keeps no entry heavier than its whole budget, and replaces an entry without counting it twice', () => {
    const cache = new BoundedCache<string>({ maxEntries: 10, maxBytes: 100 });
    expect(cache.set('big', 'x', 101)).toBe(false);
    expect(cache.get('big')).toBeUndefined();
    cache.set('k', 'one', 60);
    cache.set('k', 'two', 70);
    expect([cache.get('k'), cache.size, cache.bytes]).toEqual(['two', 1, 70]);
  });

  test('with no entries allowed, keeps nothing', () => {
    const cache = new BoundedCache<string>({ maxEntries: 0, maxBytes: 100 });
    expect(cache.set('k', 'v', 1)).toBe(false);
    expect(cache.size).toBe(0);
  });
});
