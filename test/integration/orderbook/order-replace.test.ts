import { randomUUID } from 'node:crypto';
import { BookKeel, BookOrg, lockMismatches, marketBody, units } from './support';

/**
 * Cancel-replace (amend), POST /v1/orderbook/orders/{id}/replace and the replaceOrder mutation: the
 * old order CANCELLED and the new one placed in one commit, or neither; the replacement may lock
 * what the old order releases, and is refused (leaving the old order as it was) when the funds, the
 * market's rules or the engine refuse it.
 */
let k: BookKeel;
let maker: BookOrg;
let taker: BookOrg;
let other: BookOrg;
let makerWallet: string;
let takerWallet: string;
let marketId: string;

const place = (org: BookOrg, body: Record<string, unknown>) => org.pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', timeInForce: 'GTC', ...body });
const replace = (org: BookOrg, id: string, body: Record<string, unknown>, headers?: Record<string, string>) => org.pro().post(`/v1/orderbook/orders/${id}/replace`, body, headers);
const order = async (id: string) => (await maker.pro().get(`/v1/orderbook/orders/${id}`)).body.data;
const book = async () => (await maker.pro().get('/v1/orderbook/markets/ETH-USDC/book')).body.data;
const storedSequence = async () => String((await k.db('markets').where({ id: marketId }).first()).sequence);
const usdc = async (walletId: string) => (await maker.pro().get(`/v1/orderbook/wallets/${walletId}/balances`)).body.data;

beforeAll(async () => {
  k = await BookKeel.start();
  maker = await k.createOrg();
  taker = await k.createOrg();
  other = await k.createOrg();
  const { ETH, USDC } = await k.assets();
  const created = await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC, { makerFee: '0', takerFee: '0' }));
  expect(created.status).toBe(201);
  marketId = created.body.data.id;
  makerWallet = await k.wallet(maker);
  takerWallet = await k.wallet(taker);
  // Exactly one order's worth: 1 ETH at 1000 USDC.
  await k.credit(maker, makerWallet, USDC.id, units('1000', USDC.decimals));
  await k.credit(maker, makerWallet, ETH.id, units('10', ETH.decimals));
  await k.credit(taker, takerWallet, ETH.id, units('10', ETH.decimals));
});
afterAll(() => k?.stop());

test('the old order CANCELLED and the new one OPEN in one commit; the new one locks what the old released', async () => {
  const old = await place(maker, { walletId: makerWallet, side: 'BUY', price: '1000', quantity: '1' });
  expect(old.status).toBe(201);
  // All the wallet's USDC is locked: a second order could not be placed, a replacement can.
  expect((await place(maker, { walletId: makerWallet, side: 'BUY', price: '500', quantity: '1' })).status).toBe(400);
  const before = await storedSequence();

  const res = await replace(maker, old.body.data.id, { price: '990', clientOrderId: 'amended-1' });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ status: 'OPEN', side: 'BUY', walletId: makerWallet, market: 'ETH-USDC', price: '990', quantity: '1', clientOrderId: 'amended-1' });
  expect(res.body.data.id).not.toBe(old.body.data.id);
  expect(await order(old.body.data.id)).toMatchObject({ status: 'CANCELLED', statusReason: 'USER' });
  // One commit: the cancel and the placement numbered consecutively, the market moved by both, the book shows only the new level.
  expect(BigInt(res.body.data.sequence)).toBe(BigInt(before) + 2n);
  const b = await book();
  expect(b.sequence).toBe(await storedSequence());
  expect(b.bids).toEqual([{ price: '990', quantity: '1', orders: 1 }]);
  expect(await lockMismatches(k.db)).toEqual([]);
  const rows = await k.db('orders').whereIn('id', [old.body.data.id, res.body.data.id]).select('id', 'updatedAt', 'createdAt');
  expect(new Set(rows.map((r) => r.updatedAt.getTime())).size).toBe(1);
});

test('quantity defaults to the unfilled rest; a partially filled order is replaced by its rest', async () => {
  const old = await place(maker, { walletId: makerWallet, side: 'SELL', price: '2000', quantity: '3' });
  const { USDC } = await k.assets();
  await k.credit(taker, takerWallet, USDC.id, units('2000', USDC.decimals));
  expect((await place(taker, { walletId: takerWallet, side: 'BUY', price: '2000', quantity: '1', timeInForce: 'IOC' })).body.data.status).toBe('FILLED');
  expect((await order(old.body.data.id)).status).toBe('PARTIALLY_FILLED');

  const res = await replace(maker, old.body.data.id, { price: '2100' });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ status: 'OPEN', side: 'SELL', price: '2100', quantity: '2', timeInForce: 'GTC' });
  expect(await order(old.body.data.id)).toMatchObject({ status: 'CANCELLED', filledQuantity: '1' });
  expect(await lockMismatches(k.db)).toEqual([]);
});

test('a replacement the funds, the rules or the engine refuse leaves the old order as it was', async () => {
  const live = (await k.db('orders').where({ walletId: makerWallet, side: 'BUY' }).whereIn('status', ['OPEN']).first()).id;
  const sequence = await storedSequence();
  const balances = await usdc(makerWallet);

  // The wallet's USDC: what the SELL filled above paid, plus what the live BUY locks: not 10 × 990.
  const tooDear = await replace(maker, live, { quantity: '10' });
  expect(tooDear.status).toBe(400);
  expect(tooDear.body.error.code).toBe('INSUFFICIENT_FUNDS');
  const offTick = await replace(maker, live, { price: '990.001' });
  expect(offTick.status).toBe(422);
  expect(offTick.body.error.details.fields[0].field).toBe('price');
  // A post-only BUY at or above the best ask (2100) would take.
  const wouldTake = await replace(maker, live, { price: '2100', quantity: '0.1', postOnly: true });
  expect(wouldTake.status).toBe(409);
  expect(wouldTake.body.error.code).toBe('POST_ONLY_WOULD_TAKE');

  expect(await order(live)).toMatchObject({ status: 'OPEN', price: '990' });
  expect(await storedSequence()).toBe(sequence);
  expect((await book()).sequence).toBe(sequence);
  expect(await usdc(makerWallet)).toEqual(balances);
  expect(await lockMismatches(k.db)).toEqual([]);
});

test('an ended order is not replaceable (409), another organisation’s is 404, and the key needs both cancel and create', async () => {
  const live = (await k.db('orders').where({ walletId: makerWallet, side: 'BUY', status: 'OPEN' }).first()).id;
  const ended = (await k.db('orders').where({ walletId: makerWallet, status: 'CANCELLED' }).first()).id;
  const gone = await replace(maker, ended, { price: '980' });
  expect(gone.status).toBe(409);
  expect(gone.body.error.code).toBe('ORDER_NOT_CANCELLABLE');
  const foreign = await replace(other, live, { price: '980' });
  expect(foreign.status).toBe(404);
  expect(foreign.body.error.code).toBe('NOT_FOUND');
  for (const lacking of [['orderbook_order:create', 'orderbook_order:read'], ['orderbook_order:cancel', 'orderbook_order:read']]) {
    const res = await (await maker.proWith(lacking)).post(`/v1/orderbook/orders/${live}/replace`, { price: 'not a price' });
    expect(res.status).toBe(403);
  }
  expect((await order(live)).status).toBe('OPEN');
});

test('a retry with the same Idempotency-Key answers the same replacement; the GraphQL mutation replaces too', async () => {
  const live = (await k.db('orders').where({ walletId: makerWallet, side: 'BUY', status: 'OPEN' }).first()).id;
  const key = { 'Idempotency-Key': randomUUID() };
  const first = await replace(maker, live, { price: '985' }, key);
  expect(first.status).toBe(201);
  const again = await replace(maker, live, { price: '985' }, key);
  expect(again.status).toBe(200);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body.data.id).toBe(first.body.data.id);

  const res = await maker.pro().graphql('mutation($id: ID!, $input: ReplaceOrderInput!) { replaceOrder(id: $id, input: $input) { id status price quantity } }', { id: first.body.data.id, input: { quantity: '0.5' } });
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data.replaceOrder).toMatchObject({ status: 'OPEN', price: '985', quantity: '0.5' });
  expect(await order(first.body.data.id)).toMatchObject({ status: 'CANCELLED' });
  expect(await lockMismatches(k.db)).toEqual([]);
  for (const row of await k.services.ledger.invariant()) expect(row).toMatchObject({ holds: true });
});

test('replacements racing fills and each other: every answer is one of the two outcomes, and a restart rebuilds the same book', async () => {
  const { USDC } = await k.assets();
  await k.credit(maker, makerWallet, USDC.id, units('100000', USDC.decimals));
  await k.credit(taker, takerWallet, USDC.id, units('100000', USDC.decimals));
  for (let i = 0; i < 5; i++) {
    const sell = await place(maker, { walletId: makerWallet, side: 'SELL', price: '1500', quantity: '0.2' });
    const [r1, r2, buy] = await Promise.all([
      replace(maker, sell.body.data.id, { price: '1600' }),
      replace(maker, sell.body.data.id, { price: '1700' }),
      place(taker, { walletId: takerWallet, side: 'BUY', price: '1500', quantity: '0.2', timeInForce: 'IOC' }),
    ]);
    const won = [r1, r2].filter((r) => r.status === 201);
    expect(won.length).toBeLessThanOrEqual(1);
    for (const r of [r1, r2].filter((r) => r.status !== 201)) expect(r.body.error.code).toBe('ORDER_NOT_CANCELLABLE');
    expect((await order(sell.body.data.id)).status).toBe(won.length ? 'CANCELLED' : 'FILLED');
    expect(buy.body.data.status).toBe(won.length ? 'EXPIRED' : 'FILLED');
    expect((await book()).sequence).toBe(await storedSequence());
  }
  expect(await lockMismatches(k.db)).toEqual([]);
  const before = await book();
  await k.restart();
  const after = await book();
  expect({ ...after, timestamp: undefined }).toEqual({ ...before, timestamp: undefined });
}, 60_000);

test('a replacement without a quantity takes the rest as the replace is applied: racing a partial fill, the new order and the old one’s fills add up to the old order', async () => {
  for (let i = 0; i < 6; i++) {
    const sell = await place(maker, { walletId: makerWallet, side: 'SELL', price: '1500', quantity: '1' });
    expect(sell.status).toBe(201);
    const [buy, res] = await Promise.all([
      place(taker, { walletId: takerWallet, side: 'BUY', price: '1500', quantity: '0.4', timeInForce: 'IOC' }),
      replace(maker, sell.body.data.id, { price: '1600' }),
    ]);
    expect(buy.status).toBe(201);
    expect(res.status).toBe(201);
    const old = await order(sell.body.data.id);
    expect(old.status).toBe('CANCELLED');
    // Filled first (0.4 filled, 0.6 carried) or replaced first (nothing filled, 1 carried): never more than was unfilled.
    expect(units(res.body.data.quantity, 3) + units(old.filledQuantity, 3)).toBe(1000n);
    expect((await maker.pro().delete(`/v1/orderbook/orders/${res.body.data.id}`)).status).toBe(200);
  }
  expect(await lockMismatches(k.db)).toEqual([]);
}, 60_000);
