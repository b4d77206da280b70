import type { ExecutionResult } from 'graphql';
import type { WebSocket } from 'ws';
import type { PushSource } from '../platform/events/shared-stream';
import type { Result } from './shared-execution';

export interface DirectDeliveryOptions {
  socket: WebSocket;
  /** The subscription's id in the graphql-ws protocol. */
  id: string;
  maxQueued: number;
  maxBufferedBytes: number;
  /** The connection fell behind: close it as a slow consumer. */
  overflow(reason: string): void;
  /** Shapes a result that carries errors (per connection: it names the request id). */
  withErrors(result: ExecutionResult): ExecutionResult;
  /** Called before each send (coalesces the connection's writes). */
  beforeSend(): void;
}

/** The JSON text of a result, computed once however many subscribers it goes to. */
const texts = new WeakMap<object, string>();
const textOf = (result: ExecutionResult): string => {
  let text = texts.get(result);
  if (text === undefined) texts.set(result, (text = JSON.stringify(result)));
  return text;
};

/**
 * Sends a shared feed's results as graphql-ws `next` messages straight to the socket, in order,
 * each result serialised once for all the subscribers it reaches. A result still being computed
 * holds the ones after it; more than `maxQueued` of them waiting, or more than `maxBufferedBytes`
 * unsent on the socket, and the connection is a slow consumer. The iterator returned to graphql-ws
 * yields nothing and ends when the feed does (graphql-ws then sends `complete`), or throws the
 * feed's error when it fails (graphql-ws then sends `error`; results not yet sent are dropped).
 */
export function directDelivery(source: PushSource<Result> & { return?: () => Promise<unknown> }, o: DirectDeliveryOptions): AsyncIterableIterator<ExecutionResult> {
  const prefix = `{"id":${JSON.stringify(o.id)},"type":"next","payload":`;
  const pending: Result[] = [];
  let draining = false;
  let ended = false;
  /** Why the feed failed, until graphql-ws has taken it (it then sends the subscription's `error`). */
  let failure: { error: unknown } | null = null;
  let whenEnded: (() => void) | null = null;
  const end = (error?: unknown) => {
    if (ended) return;
    ended = true;
    if (error !== undefined) failure = { error };
    pending.length = 0;
    whenEnded?.();
  };
  const finished = (): Promise<IteratorResult<ExecutionResult>> => {
    const f = failure;
    failure = null;
    return f ? Promise.reject(f.error) : Promise.resolve({ value: undefined, done: true });
  };
  const stop = (reason: string) => {
    end();
    o.overflow(reason);
    void source.return?.();
  };
  const send = (result: ExecutionResult) => {
    const { socket } = o;
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > o.maxBufferedBytes) return stop(`Slow consumer: more than ${o.maxBufferedBytes} bytes unsent`);
    o.beforeSend();
    socket.send(`${prefix}${result.errors?.length ? JSON.stringify(o.withErrors(result)) : textOf(result)}}`);
  };
  const drain = async () => {
    draining = true;
    while (pending.length && !ended) {
      const head = pending[0];
      const result = head instanceof Promise ? await head : head;
      if (ended) break;
      pending.shift();
      send(result);
    }
    draining = false;
  };
  source.attach((r) => {
    if (ended) return;
    pending.push(r);
    if (pending.length > o.maxQueued) return stop(`Slow consumer: more than ${o.maxQueued} messages of a subscription waiting`);
    if (!draining) void drain();
  }, end);
  const results: AsyncIterableIterator<ExecutionResult> = {
    next: () => (ended ? finished() : new Promise<void>((resolve) => (whenEnded = resolve)).then(finished)),
    async return() {
      end();
      await source.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => results,
  };
  return results;
}
