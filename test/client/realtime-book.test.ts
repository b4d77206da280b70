import { useTestKeel } from '../support/use-test-keel';
import { eventually } from '../support/eventually';
import { parseChainsConfig } from '../../src/modules/chains/chain-config';
import { Book, BookMessage, BookSource, BookSync, createCoreClient, createProClient, KeelRealtime, ProClient, realtimeBookSource, ResyncEvent, unwrap } from '../../clients/typescript/src';

/**
 * The realtime helper against a real order-book host: a market's book kept from the graphql-ws
 * channel, compared with the book the REST API serves.
 */
const SYMBOL = 'CLB-USDC';
const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100 }, { orgs: 1 });

let pro: ProClient;
let walletId: string;
const open: (() => unknown)[] = [];

beforeAll(async () => {
  const chainId = parseChainsConfig(process.env.KEEL_CHAINS!)[0].chainId;
  const chain = (await t.keel.services.chains.listBlockchains({ limit: 100, offset: 0 })).items.find((b) => b.chainId === chainId)!;
  const assets = (await t.keel.services.chains.listAssets({ limit: 100, offset: 0, blockchainId: chain.id })).items;
  const [ETH, USDC] = [assets.find((a) => a.symbol === 'ETH')!, assets.find((a) => a.symbol === 'USDC')!];
  const market = await (await t.operator()).post('/v1/orderbook/markets', { symbol: SYMBOL, baseAssetId: ETH.id, quoteAssetId: USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1' });
  expect(market.status).toBe(201);

  pro = createProClient({ baseUrl: t.proUrl, apiKey: org.proKey!, orgId: org.orgId });
  const core = createCoreClient({ baseUrl: t.coreUrl, apiKey: org.adminKey, orgId: org.orgId });
  walletId = (await unwrap(core.POST('/v1/master-wallets', { body: { blockchainId: chain.id, name: 'Trading' } }))).data.id;
  const credit = (assetId: string, amount: bigint) =>
    t.keel.platform.db.transaction((trx) => t.keel.services.ledger.credit(trx, { organizationId: org.orgId, walletId, assetId, amount, reference: `client-test:${assetId}` }));
  await credit(USDC.id, 1_000_000n * 10n ** BigInt(USDC.decimals));
  await credit(ETH.id, 1_000n * 10n ** BigInt(ETH.decimals));
});
// Each test's connections close before the next test, and before Keel stops (it waits for open sockets).
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

/** A resting order: bids below 2000 and asks above it never cross. */
const rest = (side: 'BUY' | 'SELL', price: string, quantity = '0.5') =>
  unwrap(pro.POST('/v1/orderbook/orders', { body: { walletId, market: SYMBOL, side, type: 'LIMIT', price, quantity } }));

const restBook = async () => (await unwrap(pro.GET('/v1/orderbook/markets/{symbol}/book', { params: { path: { symbol: SYMBOL }, query: { levels: 500 } } }))).data;
const levels = (book: Pick<Book, 'bids' | 'asks'> | undefined) => book && { bids: book.bids, asks: book.asks };

/** Waits until the helper's book is the book REST serves. */
const inStepWithRest = (sync: BookSync) =>
  eventually(async () => {
    const expected = levels(await restBook());
    return JSON.stringify(levels(sync.book())) === JSON.stringify(expected) && expected;
  }, 15_000);

function startSync(source: (realtime: KeelRealtime) => BookSource, realtime = new KeelRealtime({ baseUrl: t.proUrl, pro, channels: [`book:${SYMBOL}`] })) {
  const resyncs: ResyncEvent[] = [];
  const errors: unknown[] = [];
  const sync = new BookSync({ symbol: SYMBOL, source: source(realtime), pro, onResync: (e) => resyncs.push(e), onError: (e) => errors.push(e) });
  sync.start();
  open.push(() => sync.stop(), () => realtime.close());
  return { sync, resyncs, errors, realtime };
}

test('the book starts from the channel snapshot and follows its updates, equal to the REST book', async () => {
  await rest('BUY', '1990');
  const { sync, resyncs, errors } = startSync(realtimeBookSource);
  await eventually(() => sync.book());
  await rest('BUY', '1980');
  await rest('SELL', '2010');
  await rest('SELL', '2010', '0.25');
  const book = await inStepWithRest(sync);
  expect(book.asks).toContainEqual({ price: '2010', quantity: '0.75', orders: 2 });
  expect(resyncs).toEqual([]);
  expect(errors).toEqual([]);
});

test('a lost message (a sequence gap) makes the helper read the REST snapshot and apply what came since: the book equals REST again', async () => {
  let dropNextUpdate = false;
  const dropped: BookMessage[] = [];
  // The channel as a lossy network would deliver it: the next UPDATE once armed never arrives.
  const lossy = (realtime: KeelRealtime): BookSource => (symbol, sink) =>
    realtimeBookSource(realtime)(symbol, {
      ...sink,
      next: (message) => {
        if (dropNextUpdate && message.kind === 'UPDATE') {
          dropNextUpdate = false;
          return void dropped.push(message);
        }
        sink.next(message);
      },
    });
  const { sync, resyncs, errors } = startSync(lossy);
  await inStepWithRest(sync);

  dropNextUpdate = true;
  await rest('BUY', '1970');
  await eventually(() => dropped.length === 1);
  // Until the next message, the helper cannot know: its book lacks the 1970 bid.
  expect(sync.book()!.bids.map((l) => l.price)).not.toContain('1970');

  await rest('SELL', '2020');
  await eventually(() => resyncs.length === 1);
  expect(resyncs[0]).toEqual({ expected: dropped[0].sequence, received: String(BigInt(dropped[0].sequence) + 1n) });
  await sync.idle();
  const book = await inStepWithRest(sync);
  expect(book.bids).toContainEqual({ price: '1970', quantity: '0.5', orders: 1 });
  expect(book.asks).toContainEqual({ price: '2020', quantity: '0.5', orders: 1 });

  // After the resync the updates apply one by one again.
  await rest('SELL', '2030');
  expect((await inStepWithRest(sync)).asks).toContainEqual({ price: '2030', quantity: '0.5', orders: 1 });
  expect(resyncs).toHaveLength(1);
  expect(errors).toEqual([]);
});

test('the realtime token is fetched again before it expires, the connection moves to it, and the book stays live', async () => {
  const tokens: { expiresAt: string }[] = [];
  const realtime = new KeelRealtime({ baseUrl: t.proUrl, pro, channels: [`book:${SYMBOL}`], ttlSeconds: 3, renewBeforeSeconds: 1, onToken: (token) => tokens.push(token) });
  const { sync, errors, resyncs } = startSync(realtimeBookSource, realtime);
  await inStepWithRest(sync);
  const first = Date.parse(tokens[0].expiresAt);
  // Well past the first token's expiry: the host closes a connection whose token expired (4401).
  await eventually(() => tokens.length >= 3 && Date.now() > first + 1000, 15_000);
  expect(Date.parse(tokens[2].expiresAt)).toBeGreaterThan(Date.parse(tokens[1].expiresAt));

  await rest('BUY', '1960');
  expect((await inStepWithRest(sync)).bids).toContainEqual({ price: '1960', quantity: '0.5', orders: 1 });
  expect(errors).toEqual([]);
  expect(resyncs).toEqual([]);
});

test('a connection the host closes for an expired token (4401) is renewed the same way', async () => {
  const tokens: { expiresAt: string }[] = [];
  // Renewal scheduled only long after expiry: the host's close is what asks for the new token.
  const realtime = new KeelRealtime({ baseUrl: t.proUrl, pro, channels: [`book:${SYMBOL}`], ttlSeconds: 2, renewBeforeSeconds: -60, onToken: (token) => tokens.push(token) });
  const { sync, errors } = startSync(realtimeBookSource, realtime);
  await inStepWithRest(sync);
  await eventually(() => tokens.length >= 2, 15_000);
  expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(tokens[0].expiresAt));

  await rest('SELL', '2040');
  expect((await inStepWithRest(sync)).asks).toContainEqual({ price: '2040', quantity: '0.5', orders: 1 });
  expect(errors).toEqual([]);
});
