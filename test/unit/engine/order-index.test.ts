import fc from 'fast-check';
import { hashOf, OrderIndex } from '../../../src/engine/order-index';

interface Entry {
  id: string;
  hash: number;
}

/** Four hashes in all, each landing in the table's last slots: long probe runs that wrap around. */
const collidingHash = (id: string) => (hashOf(id) & 3) - 4;

/** add (if absent), take, remove (if present) or get, each on an id from a small space so lookups also miss. */
const operations = (ids: number) => fc.array(fc.tuple(fc.constantFrom('add', 'take', 'remove', 'get'), fc.nat(ids - 1)), { minLength: 300, maxLength: 800 });

describe('OrderIndex', () => {
  it.each([
    ['real hashes', hashOf, 2_000],
    ['colliding hashes', collidingHash, 200],
  ])('agrees with a Map over random adds, takes, removes and lookups (%s)', (_, hashFor, ids) => {
    fc.assert(
      fc.property(operations(ids), (ops) => {
        const index = new OrderIndex<Entry>(4);
        const reference = new Map<string, Entry>();
        for (const [op, n] of ops) {
          const id = `o${n}`;
          const known = reference.get(id);
          if (op === 'add' && !known) {
            const entry = { id, hash: hashFor(id) };
            index.add(entry);
            reference.set(id, entry);
          } else if (op === 'take') {
            expect(index.take(id, hashFor(id))).toBe(known);
            reference.delete(id);
          } else if (op === 'remove' && known) {
            index.remove(known);
            reference.delete(id);
          } else {
            expect(index.get(id, hashFor(id))).toBe(known);
          }
          expect(index.size).toBe(reference.size);
        }
        for (const [id, entry] of reference) expect(index.get(id, entry.hash)).toBe(entry);
      }),
      { numRuns: 15 },
    );
  });

  it('finds every entry after growing many times', () => {
    const index = new OrderIndex<Entry>();
    const entries = Array.from({ length: 50_000 }, (_, i) => `${i}-${(i * 7919) % 10_007}`).map((id) => ({ id, hash: hashOf(id) }));
    for (const e of entries) index.add(e);
    expect(entries.every((e) => index.get(e.id) === e)).toBe(true);
    expect(index.get('absent')).toBeUndefined();
  });
});
