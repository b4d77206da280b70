/**
 * Resting orders by id: an open-addressing hash table (linear probing, backward-shift deletion)
 * whose hashes sit in one dense Int32Array (0 marks an empty slot). On a book of hundreds of
 * thousands of orders a Map keyed by string cost several cache misses a lookup and most of the
 * engine's time (the bench's growing book); here a miss touches only the hashes, a hit one entry,
 * and an entry keeps its hash so removing it or growing the table never hashes the id again.
 */
export class OrderIndex<T extends { readonly id: string; readonly hash: number }> {
  private hashes: Int32Array;
  private entries: (T | undefined)[];
  private mask: number;
  private count = 0;

  constructor(capacity = 1024) {
    const size = 1 << Math.ceil(Math.log2(Math.max(16, capacity * 2)));
    this.hashes = new Int32Array(size);
    this.entries = new Array<T | undefined>(size);
    this.mask = size - 1;
  }

  get size(): number {
    return this.count;
  }

  get(id: string, hash = hashOf(id)): T | undefined {
    const i = this.find(id, hash);
    return i < 0 ? undefined : this.entries[i];
  }

  /** Adds an entry whose id is not in the index (the caller has checked). */
  add(entry: T): void {
    if ((this.count + 1) * 2 > this.hashes.length) this.grow();
    this.place(entry);
    this.count++;
  }

  /** Removes and returns the entry with this id, if there is one. */
  take(id: string, hash = hashOf(id)): T | undefined {
    const i = this.find(id, hash);
    if (i < 0) return undefined;
    const taken = this.entries[i];
    this.vacate(i);
    return taken;
  }

  /** Removes an entry that is in the index. */
  remove(entry: T): void {
    let i = entry.hash & this.mask;
    while (this.entries[i] !== entry) i = (i + 1) & this.mask;
    this.vacate(i);
  }

  private find(id: string, hash: number): number {
    const { hashes, mask } = this;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const h = hashes[i];
      if (h === 0) return -1;
      if (h === hash && this.entries[i]!.id === id) return i;
    }
  }

  private place(entry: T, hash = entry.hash): void {
    let i = hash & this.mask;
    while (this.hashes[i] !== 0) i = (i + 1) & this.mask;
    this.hashes[i] = hash;
    this.entries[i] = entry;
  }

  /** Backward shift: pulls later entries of the probe run into the hole, so no tombstones pile up. */
  private vacate(hole: number): void {
    const { hashes, entries, mask } = this;
    let i = hole;
    for (let j = (i + 1) & mask; hashes[j] !== 0; j = (j + 1) & mask) {
      const home = hashes[j] & mask;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (stays) continue;
      hashes[i] = hashes[j];
      entries[i] = entries[j];
      i = j;
    }
    hashes[i] = 0;
    entries[i] = undefined;
    this.count--;
  }

  private grow(): void {
    const old = this.entries;
    const oldHashes = this.hashes;
    this.hashes = new Int32Array(oldHashes.length * 2);
    this.entries = new Array<T | undefined>(oldHashes.length * 2);
    this.mask = oldHashes.length * 2 - 1;
    // The hash from the old table, not from the entry: an entry object is a cache miss away.
    for (let i = 0; i < oldHashes.length; i++) if (oldHashes[i] !== 0) this.place(old[i]!, oldHashes[i]);
  }
}

/** FNV-1a over the id's UTF-16 code units, never 0 (the index's empty slot). */
export function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h === 0 ? 1 : h;
}
