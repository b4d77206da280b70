import { BookKeel, BookOrg, lockMismatches, marketBody, units } from './support';
import { RealtimeClient } from '../../support/realtime-client';
import { eventually } from '../../support/eventually';

/**
 * Order lifecycle over REST and GraphQL against real PostgreSQL, Redis and the dev chain.
 * Market ETH-USDC: tick 0.01, lot 0.001, min notional 1, maker 0.1%, taker 0.2%.
 */
let k: BookKeel;
let a: BookOrg;
let b: BookOrg;
let walletA: string;
let walletB: string;
let ETH: { id: string; decimals: number };
let USDC: { id: string; decimals: number };

const balances = async (org: BookOrg, walletId: string) => {
  const res = await org.pro().get(`/v1/orderbook/wallets/${walletId}/balances`);
  expect(res.status).toBe(200);
  return Object.fromEntries(res.body.data.map((x: { symbol: string; available: string; locked: string }) => [x.symbol, { available: x.available, locked: x.locked }]));
};

const place = (org: BookOrg, body: Record<string, unknown>) => org.pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', ...body });

beforeAll(async () => {
  k = await BookKeel.start();
  a = await k.createOrg();
  b = await k.createOrg();
  const assets = await k.assets();
  ETH = assets.ETH;
  USDC = assets.USDC;
  const created = await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC));
  expect(created.status).toBe(201);
  walletA = await k.wallet(a);
  walletB = await k.wallet(b);
  await k.credit(a, walletA, USDC.id, units('10000', USDC.decimals));
  await k.credit(b, walletB, ETH.id, units('10', ETH.decimals));
});
afterAll(() => k?.stop());

describe('order lifecycle over REST', () => {
  let sellId: string;

  it('rests a SELL and locks its base', async () => {
    const res = await place(b, { walletId: walletB, side: 'SELL', price: '2000', quantity: '1.5', clientOrderId: 'b-1' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ market: 'ETH-USDC', side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', status: 'OPEN', price: '2000', quantity: '1.5', filledQuantity: '0', remainingQuantity: '1.5', clientOrderId: 'b-1', walletId: walletB });
    sellId = res.body.data.id;
    expect(await balances(b, walletB)).toEqual({ ETH: { available: '8.5', locked: '1.5' } });
  });

  it('matches a crossing BUY at the maker price, charges fees and releases the unused lock', async () => {
    const res = await place(a, { walletId: walletA, side: 'BUY', price: '2001', quantity: '1' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'FILLED', filledQuantity: '1', remainingQuantity: '0', averagePrice: '2000', fee: '4' });
    expect(await balances(a, walletA)).toEqual({ ETH: { available: '1', locked: '0' }, USDC: { available: '7996', locked: '0' } });
    expect(await balances(b, walletB)).toEqual({ ETH: { available: '8.5', locked: '0.5' }, USDC: { available: '1998', locked: '0' } });

    const maker = await b.pro().get(`/v1/orderbook/orders/${sellId}`);
    expect(maker.body.data).toMatchObject({ status: 'PARTIALLY_FILLED', filledQuantity: '1', remainingQuantity: '0.5', fee: '2' });

    const fills = await a.pro().get(`/v1/orderbook/orders/${res.body.data.id}/fills`);
    expect(fills.status).toBe(200);
    expect(fills.body.meta).toEqual({ total: 1, limit: 50, offset: 0 });
    expect(fills.body.data[0]).toMatchObject({ liquidity: 'TAKER', side: 'BUY', price: '2000', quantity: '1', fee: '4' });

    const trades = await a.pro().get('/v1/orderbook/markets/ETH-USDC/trades');
    expect(trades.body.data).toHaveLength(1);
    expect(trades.body.data[0]).toMatchObject({ takerSide: 'BUY', price: '2000', quantity: '1', settlementBatchId: null, settlementStatus: 'QUEUED' });
    const history = await a.pro().get(`/v1/orderbook/wallets/${walletA}/trades`);
    expect(history.body.data[0]).toMatchObject({
      id: trades.body.data[0].id,
      makerOrderId: sellId,
      takerOrderId: res.body.data.id,
      makerWalletId: walletB,
      takerWalletId: walletA,
      takerSide: 'BUY',
      price: '2000',
      quantity: '1',
      makerFee: '2',
      takerFee: '4',
      settlementBatchId: null,
      settlementStatus: 'QUEUED',
    });
    expect(typeof trades.body.data[0].sequence).toBe('string');

    const book = await a.pro().get('/v1/orderbook/markets/ETH-USDC/book?levels=5');
    expect(book.body.data).toMatchObject({ market: 'ETH-USDC', bids: [], asks: [{ price: '2000', quantity: '0.5', orders: 1 }] });
  });

  it('lists orders with filters and page meta', async () => {
    const all = await b.pro().get('/v1/orderbook/orders?market=ETH-USDC&status=PARTIALLY_FILLED');
    expect(all.status).toBe(200);
    expect(all.body.meta).toEqual({ total: 1, limit: 50, offset: 0 });
    expect(all.body.data[0].id).toBe(sellId);
    expect((await b.pro().get(`/v1/orderbook/orders?walletId=${walletA}`)).body.meta.total).toBe(0);
    expect((await b.pro().get('/v1/orderbook/orders?status=NOPE')).status).toBe(422);
    expect((await a.pro().get(`/v1/orderbook/orders/${sellId}`)).status).toBe(404);
  });

  it('cancels the rest, releases the lock, and refuses a second cancel', async () => {
    expect((await a.pro().delete(`/v1/orderbook/orders/${sellId}`)).status).toBe(404);
    const res = await b.pro().delete(`/v1/orderbook/orders/${sellId}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'CANCELLED', statusReason: 'USER', filledQuantity: '1' });
    expect(await balances(b, walletB)).toEqual({ ETH: { available: '9', locked: '0' }, USDC: { available: '1998', locked: '0' } });
    const again = await b.pro().delete(`/v1/orderbook/orders/${sellId}`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('ORDER_NOT_CANCELLABLE');
    expect((await a.pro().get('/v1/orderbook/markets/ETH-USDC/book')).body.data.asks).toEqual([]);
  });
});

describe('placement rules', () => {
  it('refuses off-tick prices and off-lot quantities with 422 INVALID_FIELD naming the field, the quantity checked first', async () => {
    const tick = await place(a, { walletId: walletA, side: 'BUY', price: '100.005', quantity: '1' });
    expect(tick.status).toBe(422);
    expect(tick.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'price', error: 'must be a multiple of the tick size 0.01' }] } });
    const lot = await place(a, { walletId: walletA, side: 'BUY', price: '100', quantity: '0.0005' });
    expect(lot.status).toBe(422);
    expect(lot.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'quantity', error: 'must be a multiple of the lot size 0.001' }] } });
    const both = await place(a, { walletId: walletA, side: 'BUY', price: '100.005', quantity: '0.0005' });
    expect(both.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'quantity' }] } });
    const noPrice = await place(a, { walletId: walletA, side: 'BUY', quantity: '1' });
    expect(noPrice.status).toBe(422);
    expect(noPrice.body.error).toMatchObject({ code: 'MISSING_FIELD', details: { fields: [{ field: 'price' }] } });
    const small = await place(a, { walletId: walletA, side: 'BUY', price: '0.5', quantity: '1' });
    expect(small.status).toBe(422);
    expect(small.body.error.code).toBe('BELOW_MIN_NOTIONAL');
  });

  it('answers INSUFFICIENT_FUNDS when the lock cannot be taken, and changes nothing', async () => {
    const before = await balances(a, walletA);
    const res = await place(a, { walletId: walletA, side: 'BUY', price: '10000', quantity: '1' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INSUFFICIENT_FUNDS');
    expect(await balances(a, walletA)).toEqual(before);
    const sell = await place(a, { walletId: walletA, side: 'SELL', price: '3000', quantity: '2' });
    expect(sell.body.error.code).toBe('INSUFFICIENT_FUNDS');
  });

  it("404s another organisation's wallet and an unknown market", async () => {
    expect((await place(a, { walletId: walletB, side: 'BUY', price: '100', quantity: '0.1' })).status).toBe(404);
    expect((await place(a, { walletId: '00000000-0000-4000-8000-000000000000', side: 'BUY', price: '100', quantity: '0.1' })).status).toBe(404);
    expect((await place(a, { walletId: walletA, side: 'BUY', price: '100', quantity: '0.1', market: 'NOPE-USDC' })).status).toBe(404);
  });

  it('keeps clientOrderId unique per organisation (409 DUPLICATE_ENTRY)', async () => {
    const first = await place(a, { walletId: walletA, side: 'BUY', price: '100', quantity: '0.1', clientOrderId: 'dup' });
    expect(first.status).toBe(201);
    const second = await place(a, { walletId: walletA, side: 'BUY', price: '100', quantity: '0.1', clientOrderId: 'dup' });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('DUPLICATE_ENTRY');
    // The order that holds the clientOrderId is named.
    expect(second.body.error.details).toMatchObject({ orderId: first.body.data.id, fields: [{ field: 'clientOrderId', error: 'is already used' }] });
    // Another organisation may use the same clientOrderId.
    expect((await place(b, { walletId: walletB, side: 'SELL', price: '5000', quantity: '0.1', clientOrderId: 'dup' })).status).toBe(201);
    await a.pro().delete(`/v1/orderbook/orders/${first.body.data.id}`);
  });

  it('checks the clientOrderIds of placements that arrive together once for their group: of two with one id, the first is placed and the other is 409 naming it', async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => ({ walletId: walletA, side: 'BUY', price: String(90 + i), quantity: '0.1', clientOrderId: i < 2 ? 'racing' : `group-${i}` }));
    // Every statement that looks clientOrderIds up in the record: one a group, not one a placement.
    const lookups: string[] = [];
    const listener = (q: { sql: string }) => {
      if (/^\s*select/i.test(q.sql) && q.sql.includes('client_order_id')) lookups.push(q.sql);
    };
    k.db.on('query', listener);
    const answers = await Promise.all(bodies.map((body) => place(a, body))).finally(() => k.db.off('query', listener));
    expect(lookups.length).toBeGreaterThan(0);
    expect(lookups.length).toBeLessThan(bodies.length);
    expect(answers.filter((r) => r.status === 201)).toHaveLength(11);
    const refused = answers.filter((r) => r.status === 409);
    expect(refused.map((r) => r.body.error.code)).toEqual(['DUPLICATE_ENTRY']);
    const holder = answers.find((r) => r.status === 201 && r.body.data.clientOrderId === 'racing')!;
    expect(refused[0].body.error.details.orderId).toBe(holder.body.data.id);
    for (const r of answers.filter((r) => r.status === 201)) expect((await a.pro().delete(`/v1/orderbook/orders/${r.body.data.id}`)).status).toBe(200);
  });

  it('commits placements that arrive together as a group, and one the database refuses at commit does not sink the rest: they run again alone', async () => {
    // A fault of the test's making: the record refuses this one order's row.
    await k.db.raw(`CREATE FUNCTION refuse_poisoned_order() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.client_order_id = 'poisoned' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await k.db.raw('CREATE TRIGGER refuse_poisoned_order BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION refuse_poisoned_order()');
    try {
      const bodies = Array.from({ length: 12 }, (_, i) => ({ walletId: walletA, side: 'BUY', price: String(90 + i), quantity: '0.1', clientOrderId: i === 5 ? 'poisoned' : `sunk-${i}` }));
      const answers = await Promise.all(bodies.map((body) => place(a, body)));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(11);
      const failed = answers.filter((r) => r.status !== 201);
      expect(failed.map((r) => [r.status, r.body.error.code])).toEqual([[500, 'INTERNAL_ERROR']]);
      expect(JSON.stringify(failed[0].body)).not.toContain('refused by the test');
      expect(await k.db('orders').where({ clientOrderId: 'poisoned' })).toEqual([]);
      expect(new Set(answers.filter((r) => r.status === 201).map((r) => r.body.data.sequence)).size).toBe(11);
      for (const r of answers.filter((r) => r.status === 201)) expect((await a.pro().delete(`/v1/orderbook/orders/${r.body.data.id}`)).status).toBe(200);
    } finally {
      await k.db.raw('DROP TRIGGER refuse_poisoned_order ON orders');
      await k.db.raw('DROP FUNCTION refuse_poisoned_order()');
    }
    const invariant = await k.services.ledger.invariant();
    expect(invariant.every((x) => x.holds)).toBe(true);
  });

  it('rejects a post-only order that would take, recording it as REJECTED', async () => {
    // b rests a SELL at 5000 (previous test); a post-only BUY at 5000 would take it.
    const res = await place(a, { walletId: walletA, side: 'BUY', price: '5000', quantity: '0.1', postOnly: true });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('POST_ONLY_WOULD_TAKE');
    const rejected = await a.pro().get(`/v1/orderbook/orders/${res.body.error.details.orderId}`);
    expect(rejected.body.data).toMatchObject({ status: 'REJECTED', statusReason: 'POST_ONLY_WOULD_TAKE' });
    expect((await balances(a, walletA)).USDC.locked).toBe('0');
  });

  it('expires IOC and FOK remainders and releases their locks', async () => {
    // Book: one ask of 0.1 at 5000 (b).
    const ioc = await place(a, { walletId: walletA, side: 'BUY', price: '5000', quantity: '0.3', timeInForce: 'IOC' });
    expect(ioc.body.data).toMatchObject({ status: 'EXPIRED', statusReason: 'IOC_REMAINDER', filledQuantity: '0.1' });
    await place(b, { walletId: walletB, side: 'SELL', price: '5000', quantity: '0.1' });
    const fok = await place(a, { walletId: walletA, side: 'BUY', price: '5000', quantity: '0.3', timeInForce: 'FOK' });
    expect(fok.body.data).toMatchObject({ status: 'EXPIRED', statusReason: 'FOK_NOT_FILLABLE', filledQuantity: '0' });
    expect((await balances(a, walletA)).USDC.locked).toBe('0');
  });

  it('fills MARKET orders against the book and releases what a MARKET BUY did not spend', async () => {
    // Book: one ask of 0.1 at 5000 (b). A MARKET BUY of 0.2 takes it and expires the rest.
    const buy = await place(a, { walletId: walletA, side: 'BUY', type: 'MARKET', quantity: '0.2' });
    expect(buy.status).toBe(201);
    expect(buy.body.data).toMatchObject({ type: 'MARKET', price: null, status: 'EXPIRED', statusReason: 'NO_LIQUIDITY', filledQuantity: '0.1', averagePrice: '5000' });
    expect((await balances(a, walletA)).USDC.locked).toBe('0');
    // No bids: a MARKET SELL expires untouched.
    const sell = await place(b, { walletId: walletB, side: 'SELL', type: 'MARKET', quantity: '0.5' });
    expect(sell.body.data).toMatchObject({ status: 'EXPIRED', filledQuantity: '0' });
    expect((await balances(b, walletB)).ETH.locked).toBe('0');
    // A MARKET BUY needing more quote than the wallet has is refused before it matches.
    await place(b, { walletId: walletB, side: 'SELL', price: '9000', quantity: '2' });
    const tooBig = await place(a, { walletId: walletA, side: 'BUY', type: 'MARKET', quantity: '2' });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.code).toBe('INSUFFICIENT_FUNDS');
  });

  it('cancels the taker on self-trade (cancel-taker prevention, per wallet)', async () => {
    // b's ask at 9000 rests; b buying at 9000 with the same wallet cancels the incoming BUY.
    await k.credit(b, walletB, USDC.id, units('20000', USDC.decimals));
    const res = await place(b, { walletId: walletB, side: 'BUY', price: '9000', quantity: '0.1' });
    expect(res.body.data).toMatchObject({ status: 'CANCELLED', statusReason: 'SELF_TRADE', filledQuantity: '0' });
  });
});

describe('order lifecycle over GraphQL', () => {
  it('places, reads, lists fills and cancels', async () => {
    const placed = await a.pro().graphql(
      `mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { id status side price quantity market } }`,
      { input: { walletId: walletA, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: '1500.5', quantity: '0.25', clientOrderId: 'gql-1' } },
    );
    expect(placed.body.errors).toBeUndefined();
    const order = placed.body.data.placeOrder;
    expect(order).toMatchObject({ status: 'OPEN', side: 'BUY', price: '1500.5', quantity: '0.25', market: 'ETH-USDC' });

    const read = await a.pro().graphql(`query($id: ID!) { order(id: $id) { id status clientOrderId } orderFills(id: $id) { total items { id } } }`, { id: order.id });
    expect(read.body.data).toEqual({ order: { id: order.id, status: 'OPEN', clientOrderId: 'gql-1' }, orderFills: { total: 0, items: [] } });

    const sold = await b.pro().graphql(`mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { status filledQuantity } }`, {
      input: { walletId: walletB, market: 'ETH-USDC', side: 'SELL', price: '1500', quantity: '0.1' },
    });
    expect(sold.body.data.placeOrder).toEqual({ status: 'FILLED', filledQuantity: '0.1' });

    const fills = await a.pro().graphql(`query($id: ID!) { orderFills(id: $id) { total items { liquidity price quantity fee } } }`, { id: order.id });
    expect(fills.body.data.orderFills).toEqual({ total: 1, items: [{ liquidity: 'MAKER', price: '1500.5', quantity: '0.1', fee: '0.15005' }] });

    const cancelled = await a.pro().graphql(`mutation($id: ID!) { cancelOrder(id: $id) { status filledQuantity remainingQuantity } }`, { id: order.id });
    expect(cancelled.body.data.cancelOrder).toEqual({ status: 'CANCELLED', filledQuantity: '0.1', remainingQuantity: '0.15' });

    const book = await a.pro().graphql(`{ orderBook(symbol: "ETH-USDC", levels: 3) { bids { price } } ticker(symbol: "ETH-USDC") { last trades24h } }`);
    expect(book.body.data.orderBook.bids).toEqual([]);
    expect(book.body.data.ticker.last).toBe('1500.5');
  });

  it('answers errors with the spec code in extensions', async () => {
    const res = await a.pro().graphql(`mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { id } }`, {
      input: { walletId: walletA, market: 'ETH-USDC', side: 'BUY', price: '1', quantity: '1000000' },
    });
    expect(res.body.errors[0].extensions.code).toBe('INSUFFICIENT_FUNDS');
  });
});

describe('wallet trade history', () => {
  it('is visible only to an organisation that has placed an order with the wallet', async () => {
    const mine = await a.pro().get(`/v1/orderbook/wallets/${walletA}/trades?limit=2`);
    expect(mine.status).toBe(200);
    expect(mine.body.meta).toMatchObject({ limit: 2, offset: 0 });
    expect(mine.body.meta.total).toBeGreaterThanOrEqual(3);
    expect(mine.body.data).toHaveLength(2);
    expect(mine.body.data.every((t: { makerWalletId: string; takerWalletId: string }) => t.makerWalletId === walletA || t.takerWalletId === walletA)).toBe(true);

    // b traded with walletA but never placed an order with it.
    const theirs = await b.pro().get(`/v1/orderbook/wallets/${walletA}/trades`);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('NOT_FOUND');
    expect((await a.pro().get('/v1/orderbook/wallets/00000000-0000-4000-8000-000000000000/trades')).status).toBe(404);
    expect((await a.pro().get('/v1/orderbook/wallets/not-a-uuid/trades')).status).toBe(404);
    // A wallet of its own with no orders: 404 too.
    const idle = await k.wallet(a, 'Idle');
    expect((await a.pro().get(`/v1/orderbook/wallets/${idle}/trades`)).status).toBe(404);
  });
});

describe('the public trade tape', () => {
  const PUBLIC = ['createdAt', 'id', 'market', 'marketId', 'price', 'quantity', 'sequence', 'settlementBatchId', 'settlementStatus', 'takerSide'];
  const PRIVATE = ['makerOrderId', 'takerOrderId', 'makerWalletId', 'takerWalletId', 'makerFee', 'takerFee'];

  it("shows another organisation's trades over REST, GraphQL and the trades feed without their orders, wallets or fees; the wallet's trade history keeps them", async () => {
    expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-TAPE', ETH, USDC))).status).toBe(201);
    const c = await k.createOrg();
    const walletC = await k.wallet(c);
    await k.credit(c, walletC, USDC.id, units('1000', USDC.decimals));
    const feed = new RealtimeClient(k.keel.pro!.url, { apiKey: a.proKey!, orgId: a.orgId });
    try {
      // b sells to c; a only watches.
      const live = feed.subscribe(`subscription ($s: String!) { trades(symbol: $s) { ${PUBLIC.join(' ')} } }`, { s: 'ETH-TAPE' });
      const privateLive = PRIVATE.map((f) => feed.subscribe(`subscription { trades(symbol: "ETH-TAPE") { id ${f} } }`));
      const theirs: string[] = [walletB, walletC];
      await eventually(async () => {
        const sell = await place(b, { market: 'ETH-TAPE', walletId: walletB, side: 'SELL', price: '2000', quantity: '0.01' });
        const buy = await place(c, { market: 'ETH-TAPE', walletId: walletC, side: 'BUY', price: '2000', quantity: '0.01', timeInForce: 'IOC' });
        expect(buy.body.data.status).toBe('FILLED');
        theirs.push(sell.body.data.id, buy.body.data.id);
        return live.messages.length > 0;
      });
      const leaks = (value: unknown) => theirs.filter((id) => JSON.stringify(value).includes(id));

      const rest = await a.pro().get('/v1/orderbook/markets/ETH-TAPE/trades');
      expect(rest.status).toBe(200);
      expect(rest.body.data.length).toBe(theirs.length / 2 - 1);
      for (const t of rest.body.data) expect(Object.keys(t).sort()).toEqual(PUBLIC);
      expect(leaks(rest.body)).toEqual([]);

      const graphql = await a.pro().graphql(`{ marketTrades(symbol: "ETH-TAPE") { items { ${PUBLIC.join(' ')} } } }`);
      expect(graphql.body.data.marketTrades.items).toEqual(rest.body.data);
      for (const f of PRIVATE) {
        const asked = await a.pro().graphql(`{ marketTrades(symbol: "ETH-TAPE") { items { id ${f} } } }`);
        expect(asked.body.data).toBeUndefined();
        expect(asked.body.errors[0].message).toContain(`Cannot query field "${f}"`);
      }

      for (const t of live.messages) expect(Object.keys(t).sort()).toEqual(PUBLIC);
      expect(leaks(live.messages)).toEqual([]);
      await eventually(() => privateLive.every((f) => f.errors));
      for (const [i, f] of privateLive.entries()) {
        expect(f.messages).toEqual([]);
        expect(f.errors![0].message).toContain(`Cannot query field "${PRIVATE[i]}"`);
      }

      // b's own wallet's trade history carries them.
      const history = await b.pro().get(`/v1/orderbook/wallets/${walletB}/trades?limit=100`);
      const last = history.body.data.find((t: { id: string }) => t.id === rest.body.data[0].id);
      expect(last).toMatchObject({ makerWalletId: walletB, takerWalletId: walletC, makerOrderId: theirs.at(-2), takerOrderId: theirs.at(-1), makerFee: '0.02', takerFee: '0.04' });
    } finally {
      await feed.close();
    }
  });
});

describe('paging through rows that tie on every sort key but id', () => {
  it("pages an organisation's orders and a wallet's trades made in several markets' group commits of one millisecond and one sequence without repeating or skipping one", async () => {
    // Six markets, not two: with two tied rows PostgreSQL's top-N sort happens to return both; with six it repeats one.
    const symbols = Array.from({ length: 6 }, (_, i) => `TIE${i}-USDC`);
    const seller = await k.createOrg();
    const buyer = await k.createOrg();
    const sellerWallet = await k.wallet(seller);
    const buyerWallet = await k.wallet(buyer);
    await k.credit(seller, sellerWallet, ETH.id, units('1', ETH.decimals));
    await k.credit(buyer, buyerWallet, USDC.id, units('1000', USDC.decimals));
    const operator = await k.operator();
    const orders: string[] = [];
    for (const market of symbols) {
      expect((await operator.post('/v1/orderbook/markets', marketBody(market, ETH, USDC))).status).toBe(201);
      expect((await place(seller, { market, walletId: sellerWallet, side: 'SELL', price: '100', quantity: '0.1' })).status).toBe(201);
      const buy = await place(buyer, { market, walletId: buyerWallet, side: 'BUY', price: '100', quantity: '0.1' });
      expect(buy.body.data.status).toBe('FILLED');
      orders.push(buy.body.data.id);
    }
    // Each market's group commit stamps its rows with one time and its own sequence: here all the same.
    const at = new Date('2026-01-01T00:00:00Z');
    await k.db('orders').whereIn('id', orders).update({ createdAt: at, sequence: 7 });
    const trades: { id: string }[] = await k.db('trades').whereIn('takerOrderId', orders).update({ createdAt: at, sequence: 7 }, ['id']);
    expect(trades).toHaveLength(symbols.length);

    const onePerPage = async (path: string) => {
      const ids: string[] = [];
      for (let offset = 0; offset < symbols.length; offset++) {
        const res = await buyer.pro().get(`${path}?limit=1&offset=${offset}`);
        expect(res.body.meta).toEqual({ total: symbols.length, limit: 1, offset });
        ids.push(res.body.data[0].id);
      }
      return ids.sort();
    };
    expect(await onePerPage('/v1/orderbook/orders')).toEqual([...orders].sort());
    expect(await onePerPage(`/v1/orderbook/wallets/${buyerWallet}/trades`)).toEqual(trades.map((t) => t.id).sort());
  });
});

describe('fees', () => {
  it('are the rate of the notional rounded up to a base unit of the quote, however coarse the market, and a BUY locks no more than its notional and that fee', async () => {
    // Tick 1 USDC and lot 1 ETH: one tick × one lot is a whole USDC, yet 0.1% of 1 USDC is 0.001.
    expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETHC-USDC', ETH, USDC, { tickSize: '1', lotSize: '1', minNotional: '0' }))).status).toBe(201);
    const seller = await k.wallet(b, 'Coarse seller');
    const buyer = await k.wallet(a, 'Coarse buyer');
    await k.credit(b, seller, ETH.id, units('1', ETH.decimals));
    await k.credit(a, buyer, USDC.id, units('1.002', USDC.decimals)); // the notional and the taker fee, nothing more
    const coarse = { market: 'ETHC-USDC', price: '1', quantity: '1' };
    const sell = await place(b, { ...coarse, walletId: seller, side: 'SELL' });
    expect(sell.status).toBe(201);
    const buy = await place(a, { ...coarse, walletId: buyer, side: 'BUY' });
    expect(buy.status).toBe(201);
    expect(buy.body.data).toMatchObject({ status: 'FILLED', fee: '0.002' });
    expect((await b.pro().get(`/v1/orderbook/orders/${sell.body.data.id}`)).body.data).toMatchObject({ status: 'FILLED', fee: '0.001' });
    const [trade] = (await a.pro().get(`/v1/orderbook/wallets/${buyer}/trades`)).body.data;
    expect(trade).toMatchObject({ price: '1', quantity: '1', makerFee: '0.001', takerFee: '0.002' });
    expect(await balances(a, buyer)).toEqual({ ETH: { available: '1', locked: '0' }, USDC: { available: '0', locked: '0' } });
    expect(await balances(b, seller)).toEqual({ ETH: { available: '0', locked: '0' }, USDC: { available: '0.999', locked: '0' } });
    expect(await lockMismatches(k.db)).toEqual([]);
  });
});

describe('the ledger', () => {
  it('conserves every asset: balances + fees = credited − debited', async () => {
    const inv = await k.services.ledger.invariant();
    expect(inv.length).toBeGreaterThan(0);
    for (const row of inv) expect(row.holds).toBe(true);
  });

  it('credits idempotently per reference and reverses what is still available', async () => {
    const w = await k.wallet(a, 'Deposits');
    await k.credit(a, w, ETH.id, 100n, 'dep:1');
    await k.credit(a, w, ETH.id, 100n, 'dep:1');
    expect(await k.services.ledger.balance(k.db, w, ETH.id)).toMatchObject({ available: 100n, locked: 0n });
    const reversed = await k.db.transaction((trx) => k.services.ledger.reverseCredit(trx, { reference: 'dep:1' }));
    // A reversal says which account the credit went to: a shortfall is that account's debt.
    expect(reversed).toEqual({ applied: true, reversed: 100n, shortfall: 0n, account: 'trading' });
    const again = await k.db.transaction((trx) => k.services.ledger.reverseCredit(trx, { reference: 'dep:1' }));
    expect(again.applied).toBe(false);
    expect((await k.services.ledger.balance(k.db, w, ETH.id)).available).toBe(0n);
    await expect(k.db.transaction((trx) => k.services.ledger.debit(trx, { organizationId: a.orgId, walletId: w, assetId: ETH.id, amount: 1n, reference: 'wd:1' }))).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    for (const row of await k.services.ledger.invariant()) expect(row.holds).toBe(true);
  });
});
