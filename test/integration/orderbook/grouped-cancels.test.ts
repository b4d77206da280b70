import { BookKeel, BookOrg, lockMismatches, marketBody, units } from './support';

/**
 * Cancels that arrive together commit together with the placements around them (one statement per
 * group, as placements do), and each answer still follows its own commit: a burst of cancels and
 * placements leaves every cancelled order CANCELLED with its lock released, and a cancel that races
 * the placement filling its order gets exactly one of the two outcomes.
 */
let k: BookKeel;
let maker: BookOrg;
let taker: BookOrg;
let makerWallet: string;
let takerWallet: string;
let marketId: string;

const place = (org: BookOrg, body: Record<string, unknown>) => org.pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', timeInForce: 'GTC', ...body });

beforeAll(async () => {
  k = await BookKeel.start();
  maker = await k.createOrg();
  taker = await k.createOrg();
  const { ETH, USDC } = await k.assets();
  const created = await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC));
  expect(created.status).toBe(201);
  marketId = created.body.data.id;
  makerWallet = await k.wallet(maker);
  takerWallet = await k.wallet(taker);
  await k.credit(maker, makerWallet, ETH.id, units('100', ETH.decimals));
  await k.credit(maker, makerWallet, USDC.id, units('1000000', USDC.decimals));
  await k.credit(taker, takerWallet, USDC.id, units('1000000', USDC.decimals));
});
afterAll(() => k?.stop());

/** The market's book sequence: moved by one by each commit that changes price levels. */
async function bookSequence(): Promise<number> {
  return Number((await k.db('market_book_sequences').where({ marketId }).first()).sequence);
}

test('a burst of cancels with placements among them: every cancel answered 200 with the order CANCELLED, locks exactly what the open orders hold', async () => {
  const resting = await Promise.all(Array.from({ length: 40 }, (_, i) => place(maker, { walletId: makerWallet, side: i % 2 ? 'SELL' : 'BUY', price: String(i % 2 ? 2100 + i : 1900 - i), quantity: '0.1' })));
  expect(resting.map((r) => r.status)).toEqual(resting.map(() => 201));
  const before = await bookSequence();

  const [cancelled, placed] = await Promise.all([
    Promise.all(resting.map((r) => maker.pro().delete(`/v1/orderbook/orders/${r.body.data.id}`))),
    Promise.all(Array.from({ length: 20 }, (_, i) => place(maker, { walletId: makerWallet, side: 'BUY', price: String(1800 - i), quantity: '0.1' }))),
  ]);
  expect(cancelled.map((r) => r.status)).toEqual(cancelled.map(() => 200));
  expect(cancelled.map((r) => r.body.data.status)).toEqual(cancelled.map(() => 'CANCELLED'));
  expect(placed.map((r) => r.status)).toEqual(placed.map(() => 201));
  // Every command changed a level; committed one by one, the 40 cancels alone would move the book sequence 40 times.
  expect((await bookSequence()) - before).toBeLessThan(40);

  const live = await k.db('orders').where({ marketId }).whereIn('status', ['OPEN', 'PARTIALLY_FILLED']).pluck('id');
  expect(live.sort()).toEqual(placed.map((r) => r.body.data.id).sort());
  expect(await lockMismatches(k.db)).toEqual([]);
}, 60_000);

test('a cancel racing the placement that fills its order: either the cancel wins (and the placement rests) or the fill does (and the cancel is ORDER_NOT_CANCELLABLE)', async () => {
  for (let i = 0; i < 5; i++) {
    const sell = await place(maker, { walletId: makerWallet, side: 'SELL', price: '2000', quantity: '0.2' });
    expect(sell.status).toBe(201);
    const [cancel, buy] = await Promise.all([maker.pro().delete(`/v1/orderbook/orders/${sell.body.data.id}`), place(taker, { walletId: takerWallet, side: 'BUY', price: '2000', quantity: '0.2' })]);
    expect(buy.status).toBe(201);
    if (cancel.status === 200) {
      expect(cancel.body.data.status).toBe('CANCELLED');
      expect(buy.body.data.status).toBe('OPEN');
      expect((await taker.pro().delete(`/v1/orderbook/orders/${buy.body.data.id}`)).status).toBe(200);
    } else {
      expect(cancel.status).toBe(409);
      expect(cancel.body.error.code).toBe('ORDER_NOT_CANCELLABLE');
      expect(buy.body.data.status).toBe('FILLED');
    }
    const row = await k.db('orders').where({ id: sell.body.data.id }).first();
    expect(row.status).toBe(cancel.status === 200 ? 'CANCELLED' : 'FILLED');
    // The sequence the book publishes is the one persisted: a cancel the group did not take numbered nothing.
    expect((await maker.pro().get('/v1/orderbook/markets/ETH-USDC/book')).body.data.sequence).toBe(String((await k.db('markets').where({ id: marketId }).first()).sequence));
  }
  expect(await lockMismatches(k.db)).toEqual([]);
}, 60_000);

test("a cancel's answer is the order as its commit left it, the same as reading it back: a partly filled order with its fills, fees and lock released", async () => {
  const sell = await place(maker, { walletId: makerWallet, side: 'SELL', price: '2000', quantity: '0.5' });
  expect(sell.status).toBe(201);
  const buy = await place(taker, { walletId: takerWallet, side: 'BUY', price: '2000', quantity: '0.2' });
  expect(buy.body.data.status).toBe('FILLED');
  const [cancelled, other] = await Promise.all([
    maker.pro().delete(`/v1/orderbook/orders/${sell.body.data.id}`),
    // A placement in the same group: the cancel's answer comes from the group's commit.
    place(maker, { walletId: makerWallet, side: 'BUY', price: '1700', quantity: '0.1' }),
  ]);
  expect(cancelled.status).toBe(200);
  expect(other.status).toBe(201);
  expect(cancelled.body.data).toMatchObject({ status: 'CANCELLED', filledQuantity: '0.2' });
  const read = await maker.pro().get(`/v1/orderbook/orders/${sell.body.data.id}`);
  expect(cancelled.body.data).toEqual(read.body.data);
  expect(await lockMismatches(k.db)).toEqual([]);
}, 60_000);

test("a cancel needs no read of an order resting in this node's book, placed here or loaded from the record: it answers what reading it back does, and another organisation's cancel of it is 404", async () => {
  const placedHere = await place(maker, { walletId: makerWallet, side: 'SELL', price: '2300', quantity: '0.3' });
  const loaded = await place(maker, { walletId: makerWallet, side: 'SELL', price: '2301', quantity: '0.3', clientOrderId: 'loaded-after-restart' });
  expect([placedHere.status, loaded.status]).toEqual([201, 201]);
  const partial = await place(taker, { walletId: takerWallet, side: 'BUY', price: '2300', quantity: '0.1' });
  expect(partial.body.data.status).toBe('FILLED');

  expect((await taker.pro().delete(`/v1/orderbook/orders/${placedHere.body.data.id}`)).status).toBe(404);
  const cancelled = await withoutOrderReads(() => maker.pro().delete(`/v1/orderbook/orders/${placedHere.body.data.id}`));
  expect(cancelled.status).toBe(200);
  expect(cancelled.body.data).toMatchObject({ status: 'CANCELLED', filledQuantity: '0.1', clientOrderId: null });
  expect(cancelled.body.data).toEqual((await maker.pro().get(`/v1/orderbook/orders/${placedHere.body.data.id}`)).body.data);

  // After a restart the book is rebuilt from the record: the order's row comes with it.
  await k.restart();
  await k.keel.services.orders.warmUp([marketId]);
  expect((await taker.pro().delete(`/v1/orderbook/orders/${loaded.body.data.id}`)).status).toBe(404);
  const cancelledLoaded = await withoutOrderReads(() => maker.pro().delete(`/v1/orderbook/orders/${loaded.body.data.id}`));
  expect(cancelledLoaded.status).toBe(200);
  expect(cancelledLoaded.body.data).toMatchObject({ status: 'CANCELLED', clientOrderId: 'loaded-after-restart', quantity: '0.3' });
  expect(cancelledLoaded.body.data).toEqual((await maker.pro().get(`/v1/orderbook/orders/${loaded.body.data.id}`)).body.data);
  expect(await lockMismatches(k.db)).toEqual([]);
}, 60_000);

/** Runs `call`, failing if Keel read an order by its id meanwhile. */
async function withoutOrderReads<T>(call: () => Promise<T>): Promise<T> {
  const reads: string[] = [];
  const listener = (q: { sql: string }) => {
    if (/from "orders" where "id" = \$1/.test(q.sql)) reads.push(q.sql);
  };
  k.db.on('query', listener);
  try {
    return await call();
  } finally {
    k.db.off('query', listener);
    expect(reads).toEqual([]);
  }
}
