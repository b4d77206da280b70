import type { ExecutionResult } from 'graphql';

/**
 * Reads a subscription's results as fast as they come and keeps at most `maxQueued` of them
 * waiting for the socket; one more and `overflow` is called (the connection is closed as a slow
 * consumer) and the subscription ends. graphql-ws sends one message per subscription at a time,
 * waiting for the socket to take it, so without this a slow reader would hold its feed's messages
 * without limit.
 */
export function boundedDelivery(source: AsyncIterable<ExecutionResult>, maxQueued: number, overflow: () => void): AsyncIterableIterator<ExecutionResult> {
  const it = source[Symbol.asyncIterator]();
  const queue: ExecutionResult[] = [];
  let waiting: (() => void) | null = null;
  let ended = false;
  let failure: unknown = null;
  const wake = () => {
    const w = waiting;
    waiting = null;
    w?.();
  };
  void (async () => {
    try {
      while (!ended) {
        const r = await it.next();
        if (r.done || ended) break;
        queue.push(r.value);
        if (queue.length > maxQueued) {
          queue.length = 0;
          overflow();
          void it.return?.();
          break;
        }
        wake();
      }
    } catch (e) {
      failure = e;
    }
    ended = true;
    wake();
  })();
  const bounded: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      for (;;) {
        if (queue.length) return { value: queue.shift()!, done: false };
        if (failure) throw failure;
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (waiting = resolve));
      }
    },
    async return() {
      ended = true;
      queue.length = 0;
      wake();
      await it.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return bounded;
    },
  };
  return bounded;
}
