import { createSourceEventStream, DocumentNode, execute, ExecutionArgs, ExecutionResult, print } from 'graphql';
import { isPushSource, isShared, PushSource } from '../platform/events/shared-stream';

export type Result = ExecutionResult | Promise<ExecutionResult>;

/** Per shared event object: its result per operation (document, operation name, variables). */
const results = new WeakMap<object, Map<string, Result>>();

/**
 * graphql-js's `subscribe`, except that an event delivered to many subscribers (marked shared by
 * its feed) is executed once per distinct operation and the result reused for every subscriber
 * with that operation, instead of once per subscriber.
 */
export async function subscribeShared(args: ExecutionArgs): Promise<DeliveredResults | ExecutionResult> {
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source;
  // Reused only between subscribers with the same rights: a field may show more to some (an event's signature to admin credentials).
  const key = `${rightsOf(args.contextValue)}\n${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? {})}\n${printed(args.document)}`;
  return mapEvents(source as AsyncIterable<unknown>, (event) => {
    const run = () => execute({ ...args, rootValue: event });
    if (!isShared(event)) return run();
    let byOperation = results.get(event);
    if (!byOperation) results.set(event, (byOperation = new Map()));
    let result = byOperation.get(key);
    if (!result) byOperation.set(key, (result = run()));
    return result;
  });
}

/**
 * The caller's rights, as far as a result depends on them today: whether it may read admin-only
 * fields (an event's signature). The order-book feeds depend on none: shared across every subscriber.
 */
function rightsOf(context: unknown): string {
  const principal = (context as { principal?: { can?(grant: string): boolean } } | undefined)?.principal;
  return principal?.can?.('admin') ? 'admin' : '';
}

const texts = new WeakMap<DocumentNode, string>();
function printed(document: DocumentNode): string {
  let text = texts.get(document);
  if (text === undefined) texts.set(document, (text = print(document)));
  return text;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** The results of a subscription, to be awaited in order (a result may still be computing). */
export type DeliveredResults = AsyncIterableIterator<ExecutionResult> & Partial<PushSource<Result>>;

function mapEvents(source: AsyncIterable<unknown>, fn: (event: unknown) => Result): DeliveredResults {
  const it = source[Symbol.asyncIterator]();
  const push: Partial<PushSource<Result>> = isPushSource<unknown>(it) ? { attach: (sink, end) => it.attach((event) => sink(fn(event)), end) } : {};
  return {
    ...push,
    async next() {
      const r = await it.next();
      if (r.done) return { value: undefined, done: true };
      return { value: await fn(r.value), done: false };
    },
    async return() {
      await it.return?.();
      return { value: undefined, done: true };
    },
    async throw(e: unknown) {
      await it.return?.();
      throw e;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
