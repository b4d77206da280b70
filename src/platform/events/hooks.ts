/** One listener of a hook point: told the hook's arguments, may be async. */
export type Listener<Args extends unknown[]> = (...args: Args) => Promise<void> | void;

/**
 * A typed in-process hook point: the one mechanism by which a module tells others that something
 * happened in this process (the outbox is the mechanism for what happened, durably and across
 * processes). Listeners are added once, by the composition root (src/services.ts, src/app.ts), and
 * are called in the order they were added.
 *
 * Two ways to call them, matching the two kinds of site:
 * - `run` awaits each listener in turn and lets the first error propagate (later listeners are not
 *   called). Used inside a transaction: a listener's failure must roll the whole transaction back
 *   (a deposit scan, a sender step, a transfer rejection), or must reach the caller (a shard rebuild).
 * - `notify` calls each listener without waiting and swallows its error, synchronous or async,
 *   handing it to `onError` (logging it where the site has a logger). Used after a commit, where a
 *   listener's failure must not undo or delay what is already committed.
 */
export class Hook<Args extends unknown[]> {
  private readonly listeners: Listener<Args>[] = [];

  constructor(private readonly onError: (error: unknown) => void = () => undefined) {}

  add(listener: Listener<Args>): void {
    this.listeners.push(listener);
  }

  /** True when no listener was added (a site may then skip preparing the arguments). */
  get empty(): boolean {
    return this.listeners.length === 0;
  }

  /** Calls every listener in order, awaiting each; the first error propagates. */
  async run(...args: Args): Promise<void> {
    for (const listener of this.listeners) await listener(...args);
  }

  /** Calls every listener in order without waiting; each one's failure goes to `onError` only. */
  notify(...args: Args): void {
    for (const listener of this.listeners) {
      try {
        void Promise.resolve(listener(...args)).catch(this.onError);
      } catch (e) {
        this.onError(e);
      }
    }
  }
}
