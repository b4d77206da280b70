import { BookFeed, BookMessage, CommittedBook } from '../../../src/modules/realtime/book-feed';
import { fakeHub } from './fake-hub';
import type { CommittedChange } from '../../../src/modules/orders/committed-change';


const level = (price: string, quantity: string, orders = 1) => ({ price, quantity, orders });
const change = (sequence: number, asks: ReturnType<typeof level>[]): CommittedChange => ({
  marketId: 'm',
  symbol: 'ETH-USDC',
  committedAt: 0,
  book: { sequence: String(sequence), bids: [], asks },
  trades: [],
  orders: [],
  balances: [],
});

/** The book the database would return: loads answer in turn from `books`. */
function loader(books: CommittedBook[]) {
  const calls: number[] = [];
  let release: (() => void) | null = null;
  const load = async () => {
    calls.push(calls.length);
    await new Promise<void>((r) => (release = r));
    return books.shift()!;
  };
  return { load, calls, release: () => release?.() };
}

async function take(it: AsyncIterableIterator<BookMessage>, n: number): Promise<BookMessage[]> {
  const out: BookMessage[] = [];
  for (let i = 0; i < n; i++) out.push((await it.next()).value);
  return out;
}

const tick = () => new Promise((r) => setImmediate(r));

test('changes that arrive while the book loads are applied after the snapshot, those it already holds skipped', async () => {
  const h = fakeHub();
  const l = loader([{ market: 'ETH-USDC', sequence: '5', bids: [], asks: [level('2000', '1')] }]);
  const feed = new BookFeed('m', 'ETH-USDC', l.load, () => undefined);
  feed.start(h.hub);
  const it = feed.subscribe();
  h.send(change(5, [level('2000', '1')]));
  h.send(change(6, [level('2001', '2')]));
  l.release();
  const [snapshot, update] = await take(it, 2);
  expect(snapshot).toMatchObject({ kind: 'SNAPSHOT', sequence: '5', asks: [level('2000', '1')] });
  expect(update).toMatchObject({ kind: 'UPDATE', sequence: '6', asks: [level('2001', '2')] });

  // A subscriber that joins now starts from the book at 6.
  const late = await take(feed.subscribe(), 1);
  expect(late[0]).toMatchObject({ kind: 'SNAPSHOT', sequence: '6', asks: [level('2000', '1'), level('2001', '2')] });
});

test('a skipped sequence number reloads the book and sends every subscriber a new SNAPSHOT, then continues in order', async () => {
  const h = fakeHub();
  const l = loader([
    { market: 'ETH-USDC', sequence: '1', bids: [], asks: [level('2000', '1')] },
    { market: 'ETH-USDC', sequence: '3', bids: [], asks: [level('2000', '3', 2)] },
  ]);
  const feed = new BookFeed('m', 'ETH-USDC', l.load, () => undefined);
  feed.start(h.hub);
  const it = feed.subscribe();
  l.release();
  await take(it, 1);
  h.send(change(3, [level('2000', '3', 2)])); // 2 was lost
  await tick();
  expect(l.calls).toHaveLength(2);
  h.send(change(4, [level('2000', '0', 0)]));
  l.release();
  const [resync, next] = await take(it, 2);
  expect(resync).toMatchObject({ kind: 'SNAPSHOT', sequence: '3', asks: [level('2000', '3', 2)] });
  expect(next).toMatchObject({ kind: 'UPDATE', sequence: '4', asks: [level('2000', '0', 0)] });
  expect((await take(feed.subscribe(), 1))[0]).toMatchObject({ kind: 'SNAPSHOT', sequence: '4', asks: [] });
});

/** A feed of a market whose book the database holds at 1, then (change 2 published while this node was away) at 2. */
function awayForChange2() {
  const h = fakeHub();
  const l = loader([
    { market: 'ETH-USDC', sequence: '1', bids: [], asks: [level('2000', '1')] },
    { market: 'ETH-USDC', sequence: '2', bids: [], asks: [level('2000', '2')] },
  ]);
  const feed = new BookFeed('m', 'ETH-USDC', l.load, () => undefined);
  feed.start(h.hub);
  return { h, l, it: feed.subscribe() };
}

test('hearing the bus again after losing it reloads the book and sends every subscriber a new SNAPSHOT, even with no change since (a quiet market)', async () => {
  const { h, l, it } = awayForChange2();
  l.release();
  await take(it, 1);

  h.resume(); // change 2 was published while this node was away
  await tick();
  expect(l.calls).toHaveLength(2);
  l.release();
  expect((await take(it, 1))[0]).toMatchObject({ kind: 'SNAPSHOT', sequence: '2', asks: [level('2000', '2')] });
});

test('hearing the bus again while the book loads loads it again: the book being read may miss a change published meanwhile', async () => {
  const { h, l, it } = awayForChange2();

  h.resume(); // the load has read the book at 1; change 2 was published while this node was away
  l.release();
  await tick();
  expect(l.calls).toHaveLength(2);
  l.release();
  expect((await take(it, 1))[0]).toMatchObject({ kind: 'SNAPSHOT', sequence: '2', asks: [level('2000', '2')] });
});
