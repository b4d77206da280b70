import type { ExecutionResult } from 'graphql';
import type { DeliveredResults, Result } from './shared-execution';

/**
 * Takes a subscription's results as fast as they come and keeps at most `maxQueued` of them
 * waiting for the socket; one more and `overflow` is called (the connection is closed as a slow
 * consumer) and the subscription ends. graphql-ws sends one message per subscription at a time,
 * waiting for the socket to take it, so without this a slow reader would hold its feed's messages
 * without limit. A source that can push (a shared feed) hands its results over synchronously;
 * any other is read in a loop.
 */
export function boundedDelivery(source: DeliveredResults, maxQueued: number, overflow: () => void): AsyncIterableIterator<ExecutionResult> {
  const queue: Result[] = [];
  let waiting: (() => void) | null = null;
  let ended = false;
  let failure: unknown = null;
  const wake = () => {
    const w = waiting;
    waiting = null;
    w?.();
  };
  const take = (r: Result): boolean => {
    if (ended) return false;
    queue.push(r);
    if (queue.length > maxQueued) {
      queue.length = 0;
      ended = true;
      overflow();
      void source.return?.();
      wake();
      return false;
    }
    wake();
    return true;
  };
  const finish = (error?: unknown) => {
    if (error !== undefined && !ended) failure = error;
    ended = true;
    wake();
  };
  if (source.attach) source.attach(take, finish);
  else {
    void (async () => {
      try {
        for (;;) {
          const r = await source.next();
          if (r.done || !take(r.value)) break;
        }
      } catch (e) {
        finish(e);
        return;
      }
      finish();
    })();
  }
  const bounded: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      for (;;) {
        if (queue.length) return { value: await queue.shift()!, done: false };
        if (failure) throw failure;
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (waiting = resolve));
      }
    },
    async return() {
      ended = true;
      queue.length = 0;
      wake();
      await source.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return bounded;
    },
  };
  return bounded;
}
