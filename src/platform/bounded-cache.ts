import { LRUCache } from 'lru-cache';

export interface BoundedCacheLimits {
  /** At most this many entries… */
  maxEntries: number;
  /** …weighing at most this many bytes together (each entry weighs what its `set` said). */
  maxBytes: number;
}

/**
 * An in-memory cache bounded in entries and in bytes (lru-cache): adding past either bound evicts
 * the least recently used entries first; an entry heavier than the whole budget is not kept. What
 * an entry weighs is its caller's estimate of the memory it keeps alive.
 */
export class BoundedCache<V extends {}> {
  /** None when no entry is allowed (lru-cache needs a positive bound). */
  private readonly lru: LRUCache<string, V> | null;

  constructor(limits: BoundedCacheLimits) {
    this.lru = limits.maxEntries > 0 && limits.maxBytes > 0 ? new LRUCache<string, V>({ max: limits.maxEntries, maxSize: limits.maxBytes }) : null;
  }

  /** The value under `key`, now the most recently used; undefined when there is none. */
  get(key: string): V | undefined {
    return this.lru?.get(key);
  }

  /** Keeps `value` under `key`, weighing `bytes`; false when it is not kept (heavier than the budget, or none). */
  set(key: string, value: V, bytes: number): boolean {
    if (!this.lru) return false;
    this.lru.delete(key);
    if (bytes > this.lru.maxSize) return false;
    this.lru.set(key, value, { size: Math.max(1, bytes) });
    return this.lru.has(key);
  }

  /** How many entries are kept. */
  get size(): number {
    return this.lru?.size ?? 0;
  }

  /** What the kept entries weigh together. */
  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }
}
