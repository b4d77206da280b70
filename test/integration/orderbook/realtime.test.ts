import { BookKeel, BookOrg, marketBody, units } from './support';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../../support/keel-process';
import { RawRealtimeSocket, RealtimeClient } from '../../support/realtime-client';
import { eventually } from '../../support/eventually';
import { ApiClient } from '../../support/api-client';

/**
 * Realtime feeds across nodes: node A (in this process, every role) takes the orders; node B (a
 * separate `keel start --roles orderbook` process on the same PostgreSQL and Redis) serves the
 * subscribers, which see A's commits through Redis.
 */
let k: BookKeel;
let nodeB: KeelProcess;
let a: BookOrg;
let b: BookOrg;
let walletA: string;
let walletB: string;
const clients: RealtimeClient[] = [];
const MAX_QUEUED = 40;
const MAX_BUFFERED = 65_536;

const BOOK = 'subscription ($s: String!) { orderBook(symbol: $s) { market kind sequence bids { price quantity orders } asks { price quantity orders } } }';
const TRADES = 'subscription ($s: String!) { trades(symbol: $s) { id sequence price quantity takerSide } }';
const ORDERS = 'subscription { orders { id walletId status filledQuantity remainingQuantity } }';
const FILLS = 'subscription { fills { id tradeId orderId liquidity side price quantity fee } }';
const BALANCES = 'subscription { balances { walletId symbol available locked } }';

interface Level {
  price: string;
  quantity: string;
  orders: number;
}
interface BookMessage {
  market: string;
  kind: 'SNAPSHOT' | 'UPDATE';
  sequence: string;
  bids: Level[];
  asks: Level[];
}

const place = (org: BookOrg, walletId: string, body: Record<string, unknown>) => org.pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', walletId, ...body });

function connect(baseUrl: string, org: BookOrg, apiKey = org.proKey!): RealtimeClient {
  const c = new RealtimeClient(baseUrl, { apiKey, orgId: org.orgId });
  clients.push(c);
  return c;
}

/** Applies a book feed in order; throws on a gap (an UPDATE that does not follow the last sequence). */
function rebuild(messages: BookMessage[]): { sequence: number; bids: Level[]; asks: Level[] } {
  let bids = new Map<string, Level>();
  let asks = new Map<string, Level>();
  let sequence = -1;
  for (const m of messages) {
    if (m.kind === 'SNAPSHOT') {
      bids = new Map(m.bids.map((l) => [l.price, l]));
      asks = new Map(m.asks.map((l) => [l.price, l]));
    } else {
      if (Number(m.sequence) !== sequence + 1) throw new Error(`gap: ${sequence} then ${m.sequence}`);
      for (const [side, levels] of [
        [bids, m.bids],
        [asks, m.asks],
      ] as const) {
        for (const l of levels) {
          if (l.orders === 0) side.delete(l.price);
          else side.set(l.price, l);
        }
      }
    }
    sequence = Number(m.sequence);
  }
  const sorted = (side: Map<string, Level>, dir: number) => [...side.values()].sort((x, y) => dir * (Number(x.price) - Number(y.price)));
  return { sequence, bids: sorted(bids, -1), asks: sorted(asks, 1) };
}

const bookSequence = async (): Promise<number> => {
  const row = await k.db('market_book_sequences').join('markets', 'markets.id', 'market_book_sequences.market_id').where('markets.symbol', 'ETH-USDC').first('market_book_sequences.sequence');
  return Number(row?.sequence ?? 0);
};

beforeAll(async () => {
  k = await BookKeel.start();
  a = await k.createOrg();
  b = await k.createOrg();
  const { ETH, USDC } = await k.assets();
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  walletA = await k.wallet(a);
  walletB = await k.wallet(b);
  await k.credit(a, walletA, USDC.id, units('100000', USDC.decimals));
  await k.credit(b, walletB, ETH.id, units('20', ETH.decimals));
  nodeB = await startKeelProcess(k.config, 'orderbook', { RATE_LIMIT_SCALE: '1000', WS_MAX_QUEUED_MESSAGES: String(MAX_QUEUED), WS_MAX_BUFFERED_BYTES: String(MAX_BUFFERED), WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: '100' });
}, 60_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  if (nodeB) await stopKeelProcess(nodeB.child);
  await k?.stop();
});

test('a subscriber on a node that took no order rebuilds, from a snapshot and gapless updates, exactly the book GET returns, and sees every trade', async () => {
  await place(b, walletB, { side: 'SELL', price: '2000', quantity: '0.5' });
  const viewer = connect(nodeB.proUrl!, a);
  const book = viewer.subscribe<BookMessage>(BOOK, { s: 'eth-usdc' });
  const trades = viewer.subscribe(TRADES, { s: 'ETH-USDC' });
  await eventually(() => book.messages.length > 0);
  expect(book.messages[0]).toMatchObject({ market: 'ETH-USDC', kind: 'SNAPSHOT', asks: [{ price: '2000', quantity: '0.5', orders: 1 }], bids: [] });

  // Resting orders on both sides, crossing orders that take several levels, and cancellations.
  const resting: { org: BookOrg; id: string }[] = [];
  for (let i = 0; i < 6; i++) {
    const sell = await place(b, walletB, { side: 'SELL', price: String(2001 + i), quantity: '0.2' });
    const buy = await place(a, walletA, { side: 'BUY', price: String(1990 - i), quantity: '0.3' });
    expect([sell.status, buy.status]).toEqual([201, 201]);
    resting.push({ org: b, id: sell.body.data.id }, { org: a, id: buy.body.data.id });
  }
  const sweep = await place(a, walletA, { side: 'BUY', price: '2003', quantity: '1.5' });
  expect(sweep.body.data.status).toBe('PARTIALLY_FILLED');
  await Promise.all([place(b, walletB, { side: 'SELL', price: '1985', quantity: '0.4', timeInForce: 'IOC' }), place(b, walletB, { side: 'SELL', price: '2010', quantity: '0.1' })]);
  for (const { org, id } of resting.slice(-3)) expect((await org.pro().request('DELETE', `/v1/orderbook/orders/${id}`)).status).toBe(200);

  const finalSequence = await bookSequence();
  await eventually(() => Number(book.messages.at(-1)!.sequence) === finalSequence);
  const rebuilt = rebuild(book.messages);
  const get = await a.pro().get('/v1/orderbook/markets/ETH-USDC/book?levels=500');
  expect({ bids: rebuilt.bids, asks: rebuilt.asks }).toEqual({ bids: get.body.data.bids, asks: get.body.data.asks });
  expect(book.messages.filter((m) => m.kind === 'SNAPSHOT')).toHaveLength(1);

  const listed = await a.pro().get('/v1/orderbook/markets/ETH-USDC/trades?limit=100');
  await eventually(() => trades.messages.length === listed.body.data.length);
  expect(trades.messages.map((t) => t.id).sort()).toEqual(listed.body.data.map((t: { id: string }) => t.id).sort());
  const sequences = trades.messages.map((t) => Number(t.sequence));
  expect(sequences).toEqual([...sequences].sort((x, y) => x - y));
});

test("private feeds carry the caller's own orders (every status), fills and balances, never another organisation's", async () => {
  const mine = connect(nodeB.proUrl!, a);
  const theirs = connect(nodeB.proUrl!, b);
  await Promise.all([mine.ready(), theirs.ready()]);
  const myOrders = mine.subscribe(ORDERS);
  const myFills = mine.subscribe(FILLS);
  const myBalances = mine.subscribe(BALANCES);
  const theirOrders = theirs.subscribe(ORDERS);
  // The subscriptions are live on node B once a commit made after them shows up there.
  await eventually(async () => {
    await place(b, walletB, { side: 'SELL', price: '5000', quantity: '0.001' });
    return theirOrders.messages.length > 0;
  });
  // Below every other ask and above every bid: the two BUYs take this SELL and nothing else.
  const maker = await place(b, walletB, { side: 'SELL', price: '1995', quantity: '0.3' });
  const taker1 = await place(a, walletA, { side: 'BUY', price: '1995', quantity: '0.1' });
  const taker2 = await place(a, walletA, { side: 'BUY', price: '1995', quantity: '0.2' });
  expect(taker2.body.data.status).toBe('FILLED');
  const makerId = maker.body.data.id;

  await eventually(() => theirOrders.messages.filter((o) => o.id === makerId && o.status === 'FILLED').length === 1);
  expect(theirOrders.messages.filter((o) => o.id === makerId).map((o) => o.status)).toEqual(['OPEN', 'PARTIALLY_FILLED', 'FILLED']);
  await eventually(() => myOrders.messages.filter((o) => o.id === taker2.body.data.id).length === 1);
  expect(myOrders.messages.map((o) => o.walletId).every((w) => w === walletA)).toBe(true);
  expect(myOrders.messages.some((o) => o.id === makerId)).toBe(false);
  expect(theirOrders.messages.some((o) => o.walletId === walletA)).toBe(false);
  expect(myOrders.messages.filter((o) => o.id === taker1.body.data.id).map((o) => o.status)).toEqual(['FILLED']);

  await eventually(() => myFills.messages.length >= 2);
  const takerIds = [taker1.body.data.id, taker2.body.data.id];
  expect(myFills.messages.map((f) => f.orderId).sort()).toEqual([...takerIds].sort());
  expect(myFills.messages.every((f) => f.liquidity === 'TAKER' && f.side === 'BUY' && f.price === '1995')).toBe(true);

  const balances = await a.pro().get(`/v1/orderbook/wallets/${walletA}/balances`);
  const eth = balances.body.data.find((x: { symbol: string }) => x.symbol === 'ETH');
  await eventually(() => myBalances.messages.some((x) => x.symbol === 'ETH' && x.available === eth.available));
  expect(myBalances.messages.every((x) => x.walletId === walletA)).toBe(true);
});

/** Subscribes `org` on node A (this process, whose services a test can make fail) to `queries`, live once a commit of the organisation's shows on the first. */
async function liveOnNodeA(org: BookOrg, walletId: string, queries: string[]) {
  const c = connect(k.keel.pro!.url, org);
  await c.ready();
  const feeds = queries.map((q) => c.subscribe(q));
  await eventually(async () => {
    await place(org, walletId, { side: 'SELL', price: '5000', quantity: '0.001' });
    return feeds[0].messages.length > 0;
  });
  return { c, feeds };
}

const feedInterrupted = (channel: string) => [expect.objectContaining({ message: expect.stringMatching(/subscribe again/), extensions: expect.objectContaining({ code: 'SERVICE_UNAVAILABLE', details: { channel } }) })];

test('a private feed whose change cannot be read from the database ends with a graphql-ws error the client sees (SERVICE_UNAVAILABLE); its other channels go on, and subscribing again delivers', async () => {
  const {
    c,
    feeds: [orders, balances],
  } = await liveOnNodeA(b, walletB, [ORDERS, BALANCES]);
  await eventually(() => balances.messages.length > 0);
  const of = jest.spyOn(k.services.walletBalances, 'of').mockRejectedValue(new Error('Connection terminated unexpectedly'));
  let sell;
  try {
    sell = await place(b, walletB, { side: 'SELL', price: '5001', quantity: '0.001' });
    expect(sell.status).toBe(201);
    await eventually(() => balances.errors);
  } finally {
    of.mockRestore();
  }
  expect(balances.errors).toEqual(feedInterrupted('balances'));
  await eventually(() => orders.messages.some((o) => o.id === sell.body.data.id));
  expect(orders.errors).toBeUndefined();

  const again = c.subscribe(BALANCES);
  await eventually(async () => {
    await place(b, walletB, { side: 'SELL', price: '5002', quantity: '0.001' });
    return again.messages.length > 0;
  });
});

test('an organisation with more changes waiting on a node than it holds (PostgreSQL far behind) has its private subscriptions end with SERVICE_UNAVAILABLE at once, not lose them in silence', async () => {
  const {
    feeds: [orders, fills],
  } = await liveOnNodeA(b, walletB, [ORDERS, FILLS]);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const views = jest.spyOn(k.services.orders.queries, 'views').mockImplementation(async () => {
    await gate;
    return [];
  });
  try {
    const market = await k.db('markets').where({ symbol: 'ETH-USDC' }).first('id');
    const at = new Date().toISOString();
    for (let i = 0; i < 5_001; i++) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const change = { marketId: market.id, symbol: 'ETH-USDC', committedAt: Date.now(), book: null, trades: [], balances: [], orders: [{ id, organizationId: b.orgId, status: 'OPEN', created: { id, createdAt: at, updatedAt: at } }] };
      k.keel.platform.realtimeBus.publish(JSON.stringify(change));
    }
    await eventually(() => orders.errors && fills.errors);
  } finally {
    release();
    views.mockRestore();
  }
  expect(orders.errors).toEqual(feedInterrupted('orders'));
  expect(fills.errors).toEqual(feedInterrupted('fills'));
});

test('ticker and candles are sent at once and again after a trade, on a node that took no order', async () => {
  const c = connect(nodeB.proUrl!, a);
  const ticker = c.subscribe('subscription { ticker(symbol: "ETH-USDC") { market last bestBid bestAsk trades24h } }');
  const candles = c.subscribe('subscription { candles(symbol: "ETH-USDC", interval: "1m") { time open high low close volume } }');
  const badInterval = c.subscribe('subscription { candles(symbol: "ETH-USDC", interval: "2m") { close } }');
  await eventually(() => ticker.messages.length > 0 && badInterval.errors);
  expect(badInterval.errors![0].extensions?.code).toBe('INVALID_FIELD');
  const tradesBefore = ticker.messages.at(-1).trades24h;

  await place(b, walletB, { side: 'SELL', price: '1996.5', quantity: '0.01' });
  expect((await place(a, walletA, { side: 'BUY', price: '1996.5', quantity: '0.01' })).body.data.status).toBe('FILLED');
  await eventually(() => ticker.messages.some((t) => t.trades24h === tradesBefore + 1));
  const rest = await a.pro().get('/v1/orderbook/markets/ETH-USDC/ticker');
  const afterTrade = ticker.messages.find((t) => t.trades24h === tradesBefore + 1)!;
  expect(afterTrade).toMatchObject({ market: 'ETH-USDC', last: '1996.5' });
  await eventually(() => ticker.messages.at(-1).bestAsk === rest.body.data.bestAsk && ticker.messages.at(-1).bestBid === rest.body.data.bestBid);
  await eventually(() => candles.messages.some((x) => x.close === '1996.5'));
  const last = candles.messages.at(-1);
  const restCandles = await a.pro().get('/v1/orderbook/markets/ETH-USDC/candles?interval=1m&count=2');
  expect(restCandles.body.data.find((x: { time: string }) => x.time === last.time)).toEqual(last);
});

test('channel permissions: market feeds need orderbook_market:read, private feeds orderbook_order:read, and a narrowed credential only its channels', async () => {
  const ordersOnly = await k.services.apiKeys.issue({ organizationId: a.orgId, name: 'orders only', host: 'pro', scopes: ['orderbook_order:read'], tier: 'Business' });
  const marketOnly = await k.services.apiKeys.issue({ organizationId: a.orgId, name: 'market only', host: 'pro', scopes: ['orderbook_market:read'], tier: 'Business' });
  const c1 = connect(nodeB.proUrl!, a, ordersOnly.secret);
  const c2 = connect(nodeB.proUrl!, a, marketOnly.secret);
  const refusedBook = c1.subscribe(BOOK, { s: 'ETH-USDC' });
  const allowedOrders = c1.subscribe(ORDERS);
  const refusedFills = c2.subscribe(FILLS);
  const allowedTrades = c2.subscribe(TRADES, { s: 'ETH-USDC' });
  await eventually(() => refusedBook.errors && refusedFills.errors);
  expect(refusedBook.errors![0].extensions?.code).toBe('FORBIDDEN');
  expect(refusedFills.errors![0].extensions?.code).toBe('FORBIDDEN');
  expect(allowedOrders.errors).toBeUndefined();
  expect(allowedTrades.errors).toBeUndefined();

  // A credential narrowed to channels (a realtime token) may use those and no other.
  const narrowed = { organizationId: a.orgId, mayUseChannel: (channel: string) => channel === 'trades:ETH-USDC' };
  await expect(k.services.realtime.book(narrowed, 'ETH-USDC')).rejects.toMatchObject({ code: 'FORBIDDEN' });
  expect(() => k.services.realtime.orders(narrowed)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  // Authorisation before validation: a channel it may not use is refused whatever the arguments.
  await expect(k.services.realtime.candles(narrowed, 'ETH-USDC', '2m')).rejects.toMatchObject({ code: 'FORBIDDEN' });
  const it = await k.services.realtime.trades(narrowed, 'eth-usdc');
  await it.return!();
  await expect(k.services.realtime.book({ organizationId: a.orgId, mayUseChannel: () => true }, 'NOPE-USDC')).rejects.toMatchObject({ code: 'NOT_FOUND' });
});

test('subscribers of one market and channel on a node share one feed', async () => {
  const before = k.services.realtime.feedCount();
  const c = connect(k.keel.pro!.url, a);
  const feeds = [c.subscribe<BookMessage>(BOOK, { s: 'ETH-USDC' }), c.subscribe<BookMessage>(BOOK, { s: 'ETH-USDC' }), connect(k.keel.pro!.url, b).subscribe<BookMessage>(BOOK, { s: 'ETH-USDC' })];
  await eventually(() => feeds.every((f) => f.messages.length > 0));
  expect(k.services.realtime.feedCount()).toBe(before + 1);
  await place(b, walletB, { side: 'SELL', price: '2500', quantity: '0.01' });
  await eventually(() => feeds.every((f) => f.messages.length > 1));
  expect(feeds[1].messages[1]).toEqual(feeds[0].messages[1]);
  expect(feeds[2].messages[1]).toEqual(feeds[0].messages[1]);
});

test("a revoked key's subscriptions end (4401)", async () => {
  const issued = await k.services.apiKeys.issue({ organizationId: a.orgId, name: 'to revoke', host: 'pro', scopes: ['orderbook_market:read', 'orderbook_order:read'], tier: 'Business' });
  const c = connect(nodeB.proUrl!, a, issued.secret);
  const feed = c.subscribe<BookMessage>(BOOK, { s: 'ETH-USDC' });
  await eventually(() => feed.messages.length > 0);
  expect((await a.core().request('DELETE', `/v1/api-keys/${issued.key.id}`)).status).toBe(200);
  await eventually(() => c.closed);
  expect(c.closed!.code).toBe(4401);
});

test('a slow consumer is disconnected (4008) while another subscriber keeps receiving every update', async () => {
  const slow = new RawRealtimeSocket(nodeB.proUrl!, { apiKey: a.proKey!, orgId: a.orgId });
  await slow.ready();
  for (let i = 0; i < 100; i++) slow.subscribe(`s${i}`, `subscription { orderBook(symbol: "ETH-USDC") { sequence bids { price quantity orders } asks { price quantity orders } } }`);
  const fast = connect(nodeB.proUrl!, b).subscribe<BookMessage>(BOOK, { s: 'ETH-USDC' });
  await eventually(() => fast.messages.length > 0);
  slow.stopReading();

  // New ask levels, one book message each, until node B reports it cut the slow consumer off.
  let price = 3000;
  await eventually(
    async () => {
      const batch = Array.from({ length: 20 }, () => place(b, walletB, { side: 'SELL', price: (price += 0.01).toFixed(2), quantity: '0.001' }));
      expect((await Promise.all(batch)).every((r) => r.status === 201)).toBe(true);
      return nodeB.output().includes('slow consumer disconnected');
    },
    60_000,
    0,
  );
  slow.resumeReading();
  const closed = await slow.whenClosed();
  expect(closed.code).toBe(4008);
  expect(closed.reason).toMatch(/^Slow consumer/);

  const finalSequence = await bookSequence();
  await eventually(() => Number(fast.messages.at(-1)!.sequence) === finalSequence);
  const rebuilt = rebuild(fast.messages);
  const get = await a.pro().get('/v1/orderbook/markets/ETH-USDC/book?levels=500');
  // GET shows at most 500 levels a side: the best 500 of the rebuilt book must be exactly those.
  expect({ bids: rebuilt.bids, asks: rebuilt.asks.slice(0, 500) }).toEqual({ bids: get.body.data.bids, asks: get.body.data.asks });
}, 90_000);

test('while Redis cannot take node A’s messages orders go on; the next message shows the gap and subscribers get a new SNAPSHOT that matches the book', async () => {
  const feed = connect(nodeB.proUrl!, a).subscribe<BookMessage>(BOOK, { s: 'ETH-USDC' });
  await eventually(() => feed.messages.length > 0);
  const publisher = (k.keel.platform.realtimeBus as unknown as { publisher: { disconnect(): void; connect(): Promise<void>; status: string } }).publisher;
  publisher.disconnect();
  try {
    for (let i = 0; i < 3; i++) expect((await place(b, walletB, { side: 'SELL', price: (2600 + i).toFixed(2), quantity: '0.01' })).status).toBe(201);
  } finally {
    await publisher.connect();
  }
  await eventually(() => publisher.status === 'ready');
  expect((await place(b, walletB, { side: 'SELL', price: '2700', quantity: '0.01' })).status).toBe(201);

  const finalSequence = await bookSequence();
  await eventually(() => Number(feed.messages.at(-1)!.sequence) === finalSequence);
  expect(feed.messages.filter((m) => m.kind === 'SNAPSHOT')).toHaveLength(2);
  const rebuilt = rebuild(feed.messages);
  const get = await a.pro().get('/v1/orderbook/markets/ETH-USDC/book?levels=500');
  expect({ bids: rebuilt.bids, asks: rebuilt.asks.slice(0, 500) }).toEqual({ bids: get.body.data.bids, asks: get.body.data.asks });
});

test("the core host's events subscription: one stream per organisation, each subscriber still gets only its types", async () => {
  const core = new RealtimeClient(k.keel.core!.url, { apiKey: a.adminKey, orgId: a.orgId });
  clients.push(core);
  const masters = core.subscribe('subscription { events(types: ["master.*"]) { id type data } }');
  const all = core.subscribe('subscription { events { id type } }');
  const addresses = connect(k.keel.core!.url, a, a.adminKey).subscribe('subscription { events(types: ["address.*"]) { id type } }');
  await core.ready();
  // Live once an event committed after the subscriptions reaches them.
  const names: string[] = [];
  await eventually(async () => {
    names.push(`live ${names.length}`);
    await k.wallet(a, names.at(-1));
    return masters.messages.length > 0 && all.messages.length > 0;
  });
  const renamed = `renamed ${Date.now()}`;
  const walletId = await k.wallet(a, renamed);
  await eventually(() => masters.messages.some((e) => e.data?.name === renamed));
  const created = masters.messages.find((e) => e.data?.name === renamed);
  expect(created.type).toBe('master.created');
  expect(created.data.id).toBe(walletId);
  await eventually(() => all.messages.some((e) => e.id === created.id));
  expect(masters.messages.every((e) => e.type.startsWith('master.'))).toBe(true);
  expect(addresses.messages.every((e) => e.type.startsWith('address.'))).toBe(true);
  expect(addresses.messages.some((e) => e.id === created.id)).toBe(false);
});

// Last: node A hands the market's shard to node B, and the later tests would find A no longer leading.
test("the book sequence continues gaplessly when the market's leader changes from one node to another", async () => {
  const feed = connect(nodeB.proUrl!, a).subscribe<BookMessage>(BOOK, { s: 'ETH-USDC' });
  await eventually(() => feed.messages.length > 0);
  const onNode = (url: string, org: BookOrg) => new ApiClient(url, { apiKey: org.proKey!, orgId: org.orgId });
  // A client that retries NOT_LEADER, as the README tells clients to.
  const place = async (url: string, org: BookOrg, body: Record<string, string>) => {
    let res = await onNode(url, org).post('/v1/orderbook/orders', body);
    await eventually(async () => {
      if (res.status !== 409 || res.body.error?.code !== 'NOT_LEADER') return true;
      res = await onNode(url, org).post('/v1/orderbook/orders', body);
      return false;
    }, 20_000, 250);
    return res;
  };
  const round = async (url: string, i: number) => {
    const sell = await place(url, b, { market: 'ETH-USDC', type: 'LIMIT', walletId: walletB, side: 'SELL', price: (2200 + i).toFixed(2), quantity: '0.02' });
    const buy = await place(url, a, { market: 'ETH-USDC', type: 'LIMIT', walletId: walletA, side: 'BUY', price: (1980 - i).toFixed(2), quantity: '0.02' });
    expect([sell.status, buy.status]).toEqual([201, 201]);
  };
  for (let i = 0; i < 3; i++) await round(k.keel.pro!.url, i);
  // Node A gives its leases back; node B takes the shard, rebuilds the book and goes on from the stored sequences.
  await k.keel.services.shardLeadership.stop();
  for (let i = 3; i < 6; i++) await round(nodeB.proUrl!, i);
  const finalSequence = await bookSequence();
  await eventually(() => Number(feed.messages.at(-1)!.sequence) === finalSequence);
  expect(feed.messages.map((m) => m.kind)).toEqual(['SNAPSHOT', ...Array(12).fill('UPDATE')]);
  const rebuilt = rebuild(feed.messages);
  const get = await onNode(nodeB.proUrl!, a).get('/v1/orderbook/markets/ETH-USDC/book?levels=500');
  expect({ bids: rebuilt.bids, asks: rebuilt.asks }).toEqual({ bids: get.body.data.bids, asks: get.body.data.asks });
});
