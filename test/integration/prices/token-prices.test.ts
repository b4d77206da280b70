import { BookKeel, BookOrg, marketBody, units } from '../orderbook/support';
import { KeelPriceSource } from '../../../src/modules/prices/keel-price-source';
import { ReferencePrices } from '../../../src/modules/prices/reference-prices';

/**
 * POST /v1/assets/prices/tokens: configured references, stablecoins at par, and otherwise the last
 * trade on Keel's own order book in a market quoted in a USD stablecoin; never an invented price.
 * The cache is off (PRICE_CACHE_SECONDS=0) so each call sees the book as it is.
 */
let k: BookKeel;
let maker: BookOrg;
let taker: BookOrg;
let makerWallet: string;
let takerWallet: string;
let assets: Record<string, { id: string; decimals: number; blockchainId: string }>;

beforeAll(async () => {
  k = await BookKeel.start({ PRICE_REFERENCES: '{"WBTC":"97000.5","DAI":"0.999"}', PRICE_CACHE_SECONDS: 0 });
  maker = await k.createOrg();
  taker = await k.createOrg();
  assets = await k.assets();
  const created = await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', assets.ETH, assets.USDC));
  expect(created.status).toBe(201);
  makerWallet = await k.wallet(maker);
  takerWallet = await k.wallet(taker);
  await k.credit(maker, makerWallet, assets.ETH.id, units('10', 18));
  await k.credit(taker, takerWallet, assets.USDC.id, units('100000', 6));
});
afterAll(() => k?.stop());

const prices = (symbols: unknown, client = maker.core()) => client.post('/v1/assets/prices/tokens', { symbols });
const trade = async (price: string) => {
  const sell = await maker.pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', walletId: makerWallet, side: 'SELL', price, quantity: '0.5' });
  expect(sell.status).toBe(201);
  const buy = await taker.pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', walletId: takerWallet, side: 'BUY', price, quantity: '0.5' });
  expect(buy.body.data.status).toBe('FILLED');
};

describe('POST /v1/assets/prices/tokens', () => {
  test('without a trade, ETH has no price (null, with the reason); stablecoins are at par unless a reference says otherwise', async () => {
    const res = await prices(['ETH', 'usdc', 'USDT', 'DAI', 'WBTC', 'DOGE']);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 6, hasMore: false });
    const [eth, usdc, usdt, dai, wbtc, doge] = res.body.data;
    expect(eth).toMatchObject({ symbol: 'ETH', price: null, lastUpdatedAt: null, source: 'none', unavailableReason: expect.stringContaining('no trade') });
    expect(usdc).toMatchObject({ symbol: 'USDC', price: '1', source: 'par', lastUpdatedAt: expect.any(String) });
    expect(usdt).toMatchObject({ symbol: 'USDT', price: '1', source: 'par' });
    expect(dai).toMatchObject({ symbol: 'DAI', price: '0.999', source: 'reference' });
    expect(wbtc).toMatchObject({ symbol: 'WBTC', price: '97000.5', source: 'reference' });
    expect(doge).toMatchObject({ symbol: 'DOGE', price: null, unavailableReason: expect.any(String) });
  });

  test('prices ETH from the last trade of the dev order book, and follows the next trade', async () => {
    await trade('2000');
    const first = (await prices(['ETH'])).body.data[0];
    const [last] = (await maker.pro().get('/v1/orderbook/markets/ETH-USDC/trades')).body.data;
    expect(first).toEqual({ symbol: 'ETH', price: '2000', lastUpdatedAt: last.createdAt, source: 'orderbook:ETH-USDC', unavailableReason: null });

    await trade('2010.5');
    expect((await prices(['ETH'])).body.data[0]).toMatchObject({ price: '2010.5', source: 'orderbook:ETH-USDC' });
    // Money decisions do not use this price: two organisations are fewer than PRICE_POLICY_MIN_ORGANIZATIONS (3).
    expect(await k.services.prices.usdValue(assets.ETH.blockchainId, assets.ETH.id, '1.5')).toMatchObject({ amountUsd: null, price: { unavailableReason: expect.stringContaining('2 organisation(s) traded ETH') } });
    expect((await k.services.prices.usdValue(assets.ETH.blockchainId, '00000000-0000-4000-8000-000000000000', '1')).amountUsd).toBeNull();
    expect((await k.services.prices.usdValue('', 'DOGE', '1')).amountUsd).toBeNull();
  });

  test('a trade older than PRICE_TRADE_MAX_AGE_SECONDS no longer prices its base asset', async () => {
    const lastTrade = new Date((await maker.pro().get('/v1/orderbook/markets/ETH-USDC/trades')).body.data[0].createdAt).getTime();
    await new Promise((r) => setTimeout(r, Math.max(0, lastTrade + 1_100 - Date.now())));
    const references = new ReferencePrices('', 'USDC,USDT,DAI');
    const rules = { windowSeconds: 3_600, minOrganizations: 3, maxDeviationBasisPoints: 1_000n };
    expect(await new KeelPriceSource(k.db, references, 1, rules).price('', 'ETH')).toMatchObject({ priceUsd: null, source: 'none', unavailableReason: expect.stringContaining('1s') });
    expect(await new KeelPriceSource(k.db, references, 3_600, rules).price('', 'ETH')).toMatchObject({ priceUsd: '2010.5', source: 'orderbook:ETH-USDC' });
  });

  test('GraphQL: the same prices', async () => {
    const res = await maker.core().graphql('mutation { tokenPrices(input: { symbols: ["USDC", "DOGE"] }) { total data { symbol price source } } }');
    expect(res.body.data.tokenPrices).toEqual({ total: 2, data: [{ symbol: 'USDC', price: '1', source: 'par' }, { symbol: 'DOGE', price: null, source: 'none' }] });
  });

  test.each([1, 100])('accepts %i symbols', async (n) => {
    const res = await prices(Array.from({ length: n }, (_, i) => `T${i}`));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(n);
  });

  test.each([0, 101])('refuses %i symbols with 422 naming symbols', async (n) => {
    const res = await prices(Array.from({ length: n }, (_, i) => `T${i}`));
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields[0].field).toBe('symbols');
  });

  test('needs the write scope (a POST): a read-only key gets 403, no key 401', async () => {
    const readOnly = await k.services.apiKeys.issue({ organizationId: maker.orgId, name: 'reader', host: 'core', scopes: ['read'], tier: 'Business' });
    const res = await prices(['ETH'], maker.core().with({ apiKey: readOnly.secret, orgId: maker.orgId }));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect((await prices(['ETH'], maker.core().with({}))).status).toBe(401);
  });
});
