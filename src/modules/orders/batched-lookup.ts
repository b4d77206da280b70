/**
 * Values looked up by key for one group of commands: the keys asked for together are read in one
 * query (`readMany`, answering by `keyOf`), each key once; a key's answer is a promise.
 */
export class BatchedLookup<K, V> {
  private readonly answers = new Map<string, Promise<V | undefined>>();

  constructor(
    private readonly keyOf: (key: K) => string,
    private readonly readMany: (keys: K[]) => Promise<Map<string, V>>,
  ) {}

  /** Reads the keys not read yet, in one query. */
  prefetch(keys: K[]): void {
    const missing = [...new Map(keys.filter((k) => !this.answers.has(this.keyOf(k))).map((k) => [this.keyOf(k), k])).values()];
    if (!missing.length) return;
    const read = this.readMany(missing);
    for (const k of missing) {
      const answer = read.then((found) => found.get(this.keyOf(k)));
      // A command refused before it asks never awaits this: a failed read must not go unhandled.
      answer.catch(() => undefined);
      this.answers.set(this.keyOf(k), answer);
    }
  }

  /** The key's value (undefined when the record has none), read with the others prefetched. */
  get(key: K): Promise<V | undefined> {
    this.prefetch([key]);
    return this.answers.get(this.keyOf(key))!;
  }
}
