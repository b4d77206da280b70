import { OrganizationFeeds } from '../../../src/modules/realtime/organization-feeds';
import { fakeHub } from './fake-hub';
import type { CommittedChange } from '../../../src/modules/orders/committed-change';
import type { OrderQueries } from '../../../src/modules/orders';
import type { WalletBalances } from '../../../src/modules/ledger';
import { KeelError } from '../../../src/platform/errors';
import { isPushSource } from '../../../src/platform/events/shared-stream';

const ORG = '11111111-1111-1111-1111-111111111111';
const WALLET = '22222222-2222-2222-2222-222222222222';


/** A commit that placed order `id` of the organisation (and moved its USDC balance). */
function placed(id: string): CommittedChange {
  const at = new Date(0).toISOString();
  return {
    marketId: 'm',
    symbol: 'ETH-USDC',
    committedAt: 0,
    book: null,
    trades: [],
    orders: [{ id, organizationId: ORG, status: 'OPEN', created: { id, createdAt: at, updatedAt: at } } as unknown as CommittedChange['orders'][number]],
    balances: [{ organizationId: ORG, walletId: WALLET, assetId: 'usdc' }],
  };
}

type Row = { id: string; status: string };
const viewsOf = (rows: Row[]) => rows.map((r) => ({ id: r.id, status: r.status }));

/** Order queries whose views are `views` (by default, as the database would give them). */
function queries(views: (rows: Row[]) => Promise<object[]> = async (rows) => viewsOf(rows)) {
  return { rowsByIds: async () => [], views: jest.fn(views) } as unknown as OrderQueries & { views: jest.Mock };
}

const balances = (of: () => Promise<object[]> = async () => [{ walletId: WALLET, assetId: 'usdc', available: '1' }]) => ({ of: jest.fn(of) }) as unknown as WalletBalances & { of: jest.Mock };

const logger = () => ({ warn: jest.fn(), error: jest.fn() });

/** Reads an iterator to its end: the values it gave, and the error it ended with (if any). */
async function drain<T>(it: AsyncIterableIterator<T>): Promise<{ values: T[]; error?: KeelError }> {
  const values: T[] = [];
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) return { values };
      values.push(r.value);
    }
  } catch (error) {
    return { values, error: error as KeelError };
  }
}

/** Takes an iterator's values as graphql-ws delivery does (pushed), recording how it ends. */
function attach<T>(it: AsyncIterableIterator<T>): { values: T[]; ended: unknown } {
  const seen: { values: T[]; ended: unknown } = { values: [], ended: 'not ended' };
  if (!isPushSource<T>(it)) throw new Error('a shared feed pushes');
  it.attach(
    (v) => seen.values.push(v),
    (error) => (seen.ended = error),
  );
  return seen;
}

const ids = (orders: object[]) => orders.map((o) => (o as { id: string }).id);

/** An organisation's feeds, started on a hub the test sends changes through, logging to a mock. */
function started(q: OrderQueries, b: WalletBalances = balances()) {
  const log = logger();
  const feeds = new OrganizationFeeds(ORG, q, b, () => undefined, log);
  const h = fakeHub();
  feeds.start(h.hub);
  return { feeds, send: h.send, resume: h.resume, log };
}

afterEach(() => jest.useRealTimers());

test('past MAX_WAITING queued changes every subscription of the organisation ends with SERVICE_UNAVAILABLE at once, instead of losing the change in silence', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const { feeds, send, log } = started(
    queries(async (rows) => {
      await gate;
      return viewsOf(rows);
    }),
  );
  const pushed = attach(feeds.orders.subscribe());
  const pulled = drain(feeds.orders.subscribe());
  const fills = drain(feeds.fills.subscribe());
  const wallet = drain(feeds.balances.subscribe());

  for (let i = 0; i < 5_001; i++) send(placed(`o${i}`));

  // The 5,001st change finds 5,000 waiting behind a stalled query: the client hears it now, not never.
  expect(pushed.ended).toBeInstanceOf(KeelError);
  expect(pushed.ended).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { channel: 'orders' } });
  for (const feed of [await pulled, await fills, await wallet]) expect(feed.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  expect((await fills).error?.details).toEqual({ channel: 'fills' });
  expect(feeds.orders.size + feeds.fills.size + feeds.balances.size).toBe(0);
  expect(log.error).toHaveBeenCalled();
  release();
  await new Promise((r) => setTimeout(r, 10));
  expect(pushed.values).toEqual([]);
});

test('a change whose order views keep failing ends the orders subscriptions with SERVICE_UNAVAILABLE after its retries, logged; the other channels go on', async () => {
  jest.useFakeTimers();
  const q = queries(async () => {
    throw new Error('Connection terminated unexpectedly');
  });
  const { feeds, send, log } = started(q);
  const orders = attach(feeds.orders.subscribe());
  const wallet = feeds.balances.subscribe();

  send(placed('o1'));
  await jest.advanceTimersByTimeAsync(5_000);

  const error = orders.ended as KeelError;
  expect(orders.values).toEqual([]);
  expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { channel: 'orders' } });
  expect(error.message).toMatch(/subscribe again/);
  expect(q.views.mock.calls.length).toBeGreaterThan(1);
  expect(log.warn).toHaveBeenCalledWith(expect.objectContaining({ channel: 'orders', err: expect.objectContaining({ message: 'Connection terminated unexpectedly' }) }), expect.any(String));
  expect(log.error).toHaveBeenCalledWith(expect.objectContaining({ channel: 'orders', organizationId: ORG }), expect.any(String));

  // The balances of that change, and of the next, still arrive.
  expect((await wallet.next()).value).toMatchObject({ walletId: WALLET });
  send(placed('o2'));
  await jest.advanceTimersByTimeAsync(0);
  expect((await wallet.next()).value).toMatchObject({ walletId: WALLET });
});

test('a change whose balances cannot be read ends the balances subscriptions with SERVICE_UNAVAILABLE', async () => {
  jest.useFakeTimers();
  const b = balances(async () => {
    throw new Error('Connection terminated unexpectedly');
  });
  const { feeds, send } = started(queries(), b);
  const wallet = attach(feeds.balances.subscribe());

  send(placed('o1'));
  await jest.advanceTimersByTimeAsync(5_000);

  expect(wallet.ended).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { channel: 'balances' } });
  expect(b.of.mock.calls.length).toBeGreaterThan(1);
});

test('a transient failure is retried: the order is delivered once, and the feed goes on', async () => {
  jest.useFakeTimers();
  let failures = 1;
  const { feeds, send, log } = started(
    queries(async (rows) => {
      if (failures-- > 0) throw new Error('Connection terminated unexpectedly');
      return viewsOf(rows);
    }),
  );
  const got = attach(feeds.orders.subscribe());

  send(placed('o1'));
  send(placed('o2'));
  await jest.advanceTimersByTimeAsync(5_000);

  expect(ids(got.values)).toEqual(['o1', 'o2']);
  expect(got.ended).toBe('not ended');
  expect(log.warn).toHaveBeenCalledTimes(1);
  expect(log.error).not.toHaveBeenCalled();
});

test('when this node hears the bus again after losing Redis, every private subscription of the organisation ends with SERVICE_UNAVAILABLE: what was published meanwhile never reached it', async () => {
  const { feeds, send, resume, log } = started(queries());
  const orders = attach(feeds.orders.subscribe());
  const fills = drain(feeds.fills.subscribe());
  const wallet = drain(feeds.balances.subscribe());
  send(placed('o1'));
  await new Promise((r) => setTimeout(r, 10));

  resume();

  expect(ids(orders.values)).toEqual(['o1']);
  expect(orders.ended).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { channel: 'orders' } });
  expect((orders.ended as KeelError).message).toMatch(/lost the realtime bus/);
  for (const feed of [await fills, await wallet]) expect(feed.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  expect(log.warn).toHaveBeenCalledWith(expect.objectContaining({ organizationId: ORG }), expect.stringMatching(/lost the realtime bus/));
});
