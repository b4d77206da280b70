export interface BoundedCacheLimits {
  /** At most this many entries… */
  maxEntries: number;
  /** …weighing at most this many bytes together (each entry weighs what its `set` said). */
  maxBytes: number;
}

/**
 * An in-memory cache bounded in entries and in bytes: adding past either bound evicts the least
 * recently used entries first; an entry heavier than the whole budget is not kept. What an entry
 * weighs is its caller's estimate of the memory it keeps alive.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private weight = 0;

  constructor(private readonly limits: BoundedCacheLimits) {}

  /** The value under `key`, now the most recently used; undefined when there is none. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` under `key`, weighing `bytes`; false when it is not kept (heavier than the budget, or none). */
  set(key: string, value: V, bytes: number): boolean {
    this.delete(key);
    const { maxEntries, maxBytes } = this.limits;
    if (maxEntries === 0 || bytes > maxBytes) return false;
    while (this.entries.size >= maxEntries || this.weight + bytes > maxBytes) this.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, bytes });
    this.weight += bytes;
    return true;
  }

  /** How many entries are kept. */
  get size(): number {
    return this.entries.size;
  }

  /** What the kept entries weigh together. */
  get bytes(): number {
    return this.weight;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.bytes;
  }
}
