const shared = new WeakSet<object>();

/** Marks a value as delivered unchanged to many subscribers: its GraphQL result may be computed once and reused. */
export function markShared<T extends object>(value: T): T {
  shared.add(value);
  return value;
}

export function isShared(value: unknown): value is object {
  return typeof value === 'object' && value !== null && shared.has(value);
}

/**
 * An iterator whose values can also be taken as they come, without a promise per value: after
 * `attach`, each value is handed to `sink` at once (what was queued first), and `end` is called
 * when the stream ends, with the error when it failed (the pulling iterator then rejects with it).
 * The graphql-ws delivery uses it to keep the per-message cost down.
 */
export interface PushSource<T> {
  attach(sink: (value: T) => void, end: (error?: unknown) => void): void;
}

export function isPushSource<T>(value: unknown): value is PushSource<T> & AsyncIterableIterator<T> {
  return typeof value === 'object' && value !== null && typeof (value as { attach?: unknown }).attach === 'function';
}

/** One subscriber's iterator: what was emitted to it and not yet taken. The consumer bounds it (graphql-ws delivery). */
class Subscriber<T> implements AsyncIterableIterator<T>, PushSource<T> {
  private readonly queue: T[] = [];
  private waiting: { resolve(r: IteratorResult<T>): void; reject(error: unknown): void } | null = null;
  private done = false;
  /** Why the stream failed, until the pulling iterator has thrown it. */
  private failure: { error: unknown } | null = null;
  private sink: ((value: T) => void) | null = null;
  private onEnd: ((error?: unknown) => void) | null = null;

  constructor(
    first: T[],
    private readonly leave: (s: Subscriber<T>) => void,
  ) {
    this.queue.push(...first);
  }

  attach(sink: (value: T) => void, end: (error?: unknown) => void): void {
    this.sink = sink;
    this.onEnd = end;
    for (const v of this.queue.splice(0)) sink(v);
    if (this.done) end(this.takeFailure());
  }

  push(value: T): void {
    if (this.done) return;
    if (this.sink) this.sink(value);
    else if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w.resolve({ value, done: false });
    } else this.queue.push(value);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length) return Promise.resolve({ value: this.queue.shift()!, done: false });
    if (this.done) return this.failure ? Promise.reject(this.takeFailure()) : Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Ends the iterator: with `error`, its consumer gets the error (once) instead of a plain end. */
  finish(error?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.queue.length = 0;
    if (error !== undefined) this.failure = { error };
    this.leave(this);
    const w = this.waiting;
    this.waiting = null;
    if (w) {
      if (this.failure) w.reject(this.takeFailure());
      else w.resolve({ value: undefined, done: true });
    }
    if (this.onEnd) this.onEnd(this.takeFailure());
  }

  private takeFailure(): unknown {
    const error = this.failure?.error;
    this.failure = null;
    return error;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

/**
 * A stream computed once and delivered to all its subscribers: `emit` hands the same object to
 * every one of them (marked shared). `onEmpty` runs when the last subscriber leaves.
 */
export class SharedStream<T extends object> {
  private readonly subscribers = new Set<Subscriber<T>>();

  constructor(private readonly onEmpty?: () => void) {}

  get size(): number {
    return this.subscribers.size;
  }

  emit(value: T): void {
    markShared(value);
    for (const s of this.subscribers) s.push(value);
  }

  /** The values emitted from now on, after `first` (for this subscriber only, e.g. a snapshot). */
  subscribe(first: T[] = []): AsyncIterableIterator<T> {
    const s = new Subscriber<T>(first, (gone) => {
      if (this.subscribers.delete(gone) && this.subscribers.size === 0) this.onEmpty?.();
    });
    this.subscribers.add(s);
    return s;
  }

  /** Ends every subscriber's iterator. */
  end(): void {
    for (const s of [...this.subscribers]) s.finish();
  }

  /** Ends every subscriber's iterator with `error`: what a subscriber had not taken yet is dropped, and it gets the error instead of the end. */
  fail(error: unknown): void {
    for (const s of [...this.subscribers]) s.finish(error);
  }
}

/** The values of `source` that pass `accept`; returning it returns `source`. */
export function filterIterator<T>(source: AsyncIterableIterator<T>, accept: (value: T) => boolean): AsyncIterableIterator<T> {
  const filtered: AsyncIterableIterator<T> = {
    async next() {
      for (;;) {
        const r = await source.next();
        if (r.done || accept(r.value)) return r;
      }
    },
    return: () => source.return?.() ?? Promise.resolve({ value: undefined, done: true }),
    [Symbol.asyncIterator]: () => filtered,
  };
  return filtered;
}
