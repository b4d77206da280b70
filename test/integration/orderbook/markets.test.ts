import { operatorOnly, PRO_TRADE_PERMISSIONS } from '../../../src/platform/auth/permissions';
import { ApiClient } from '../../support/api-client';
import { BookKeel, BookOrg, marketBody, units } from './support';

/** Markets (per deployment), the permission table on every order-book endpoint, and candles. */
let k: BookKeel;
let org: BookOrg;
let other: BookOrg;
let ETH: { id: string; decimals: number; blockchainId: string };
let USDC: { id: string; decimals: number; blockchainId: string };
let DAI: { id: string; decimals: number; blockchainId: string };

beforeAll(async () => {
  k = await BookKeel.start();
  org = await k.createOrg();
  other = await k.createOrg();
  ({ ETH, USDC, DAI } = await k.assets());
});
afterAll(() => k?.stop());

const market = (symbol: string, extra: Record<string, unknown> = {}) => marketBody(symbol, ETH, USDC, extra);

describe('markets', () => {
  it('creates a market with the spec fields and lists it for every organisation', async () => {
    const res = await (await k.operator()).post('/v1/orderbook/markets', market('ETH-USDC'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      symbol: 'ETH-USDC',
      baseAssetId: ETH.id,
      quoteAssetId: USDC.id,
      baseSymbol: 'ETH',
      quoteSymbol: 'USDC',
      tickSize: '0.01',
      lotSize: '0.001',
      minNotional: '1',
      makerFee: '0.001',
      takerFee: '0.002',
      status: 'ACTIVE',
    });
    expect(res.body.data.createdAt).toEqual(expect.any(String));
    const list = await other.pro().get('/v1/orderbook/markets');
    expect(list.status).toBe(200);
    expect(list.body.meta).toEqual({ total: 1, limit: 50, offset: 0 });
    expect(list.body.data[0].symbol).toBe('ETH-USDC');
    expect((await other.pro().get('/v1/orderbook/markets/ETH-USDC')).body.data.id).toBe(res.body.data.id);
    expect((await other.pro().get('/v1/orderbook/markets/eth-usdc')).status).toBe(200);
    expect((await other.pro().get('/v1/orderbook/markets/NOPE-USDC')).status).toBe(404);
  });

  it('validates markets', async () => {
    const dup = await (await k.operator()).post('/v1/orderbook/markets', market('ETH-USDC'));
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('DUPLICATE_ENTRY');
    // 0.01 × 0.00001 = 0.0000001 USDC: not a whole base unit of USDC (6 decimals).
    const unit = await (await k.operator()).post('/v1/orderbook/markets', market('ETH-USDX', { lotSize: '0.00001' }));
    expect(unit.status).toBe(422);
    expect(unit.body.error.details.fields[0].field).toBe('tickSize');
    const fee = await (await k.operator()).post('/v1/orderbook/markets', market('ETH-USDX', { takerFee: '0.0000001' }));
    expect(fee.status).toBe(422);
    expect(fee.body.error.details.fields[0].field).toBe('takerFee');
    const same = await (await k.operator()).post('/v1/orderbook/markets', market('ETH-ETH', { quoteAssetId: ETH.id }));
    expect(same.status).toBe(422);
    const unknown = await (await k.operator()).post('/v1/orderbook/markets', market('ETH-USDX', { quoteAssetId: '00000000-0000-4000-8000-000000000000' }));
    expect(unknown.status).toBe(422);
    const symbol = await (await k.operator()).post('/v1/orderbook/markets', market('eth/usdc'));
    expect(symbol.status).toBe(422);
    expect((await (await k.operator()).post('/v1/orderbook/markets', market('ETH-DAI', { quoteAssetId: DAI.id }))).status).toBe(201);
  });

  it('halts a market: new orders are refused with MARKET_HALTED, cancels still work', async () => {
    const wallet = await k.wallet(org);
    await k.credit(org, wallet, USDC.id, units('1000', USDC.decimals));
    const resting = await org.pro().post('/v1/orderbook/orders', { walletId: wallet, market: 'ETH-USDC', side: 'BUY', price: '100', quantity: '1' });
    expect(resting.status).toBe(201);

    const halted = await (await k.operator()).patch('/v1/orderbook/markets/ETH-USDC', { status: 'HALTED', takerFee: '0.003' });
    expect(halted.status).toBe(200);
    expect(halted.body.data).toMatchObject({ status: 'HALTED', takerFee: '0.003', makerFee: '0.001' });
    const refused = await org.pro().post('/v1/orderbook/orders', { walletId: wallet, market: 'ETH-USDC', side: 'BUY', price: '100', quantity: '1' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('MARKET_HALTED');
    expect((await org.pro().get('/v1/orderbook/markets/ETH-USDC/book')).body.data.bids).toEqual([{ price: '100', quantity: '1', orders: 1 }]);
    expect((await org.pro().delete(`/v1/orderbook/orders/${resting.body.data.id}`)).status).toBe(200);

    expect((await (await k.operator()).patch('/v1/orderbook/markets/ETH-USDC', { status: 'ACTIVE' })).body.data.status).toBe('ACTIVE');
    expect((await org.pro().post('/v1/orderbook/orders', { walletId: wallet, market: 'ETH-USDC', side: 'BUY', price: '100', quantity: '1' })).status).toBe(201);
    expect((await (await k.operator()).patch('/v1/orderbook/markets/NOPE-USDC', { status: 'ACTIVE' })).status).toBe(404);
    expect((await (await k.operator()).patch('/v1/orderbook/markets/ETH-USDC', { makerFee: '0.5' })).status).toBe(422);
  });

  it.each(['minNotional', 'makerFee', 'takerFee', 'status'])('refuses %s null with 422 naming it, over REST and GraphQL, and changes nothing', async (field) => {
    const operator = await k.operator();
    const before = (await operator.get('/v1/orderbook/markets/ETH-USDC')).body.data;
    const rest = await operator.patch('/v1/orderbook/markets/ETH-USDC', { [field]: null });
    expect(rest.status).toBe(422);
    expect(rest.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [expect.objectContaining({ field })] } });
    const gql = await operator.graphql(`mutation { updateMarket(symbol: "ETH-USDC", input: { ${field}: null }) { symbol } }`);
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'INVALID_FIELD', status: 422, details: { fields: [expect.objectContaining({ field })] } });
    expect((await operator.get('/v1/orderbook/markets/ETH-USDC')).body.data).toEqual(before);
  });
});

describe('permissions', () => {
  const fake = '00000000-0000-4000-8000-000000000000';
  const endpoints: { method: string; path: string; body?: unknown; permission: string }[] = [
    { method: 'GET', path: '/v1/orderbook/markets', permission: 'orderbook_market:read' },
    { method: 'GET', path: '/v1/orderbook/markets/ETH-USDC', permission: 'orderbook_market:read' },
    { method: 'POST', path: '/v1/orderbook/markets', body: { symbol: 'BTC-USDC', baseAssetId: fake, quoteAssetId: fake, tickSize: '0.01', lotSize: '0.001' }, permission: 'orderbook_market:manage' },
    { method: 'PATCH', path: '/v1/orderbook/markets/ETH-USDC', body: { status: 'ACTIVE' }, permission: 'orderbook_market:manage' },
    { method: 'GET', path: '/v1/orderbook/markets/ETH-USDC/book', permission: 'orderbook_market:read' },
    { method: 'GET', path: '/v1/orderbook/markets/ETH-USDC/trades', permission: 'orderbook_market:read' },
    { method: 'GET', path: '/v1/orderbook/markets/ETH-USDC/ticker', permission: 'orderbook_market:read' },
    { method: 'GET', path: '/v1/orderbook/markets/ETH-USDC/candles?interval=1m', permission: 'orderbook_market:read' },
    { method: 'GET', path: '/v1/orderbook/engine/status', permission: 'orderbook_market:read' },
    { method: 'POST', path: '/v1/orderbook/orders', body: { walletId: fake, market: 'ETH-USDC', side: 'BUY', price: '1', quantity: '1' }, permission: 'orderbook_order:create' },
    { method: 'GET', path: '/v1/orderbook/orders', permission: 'orderbook_order:read' },
    { method: 'GET', path: `/v1/orderbook/orders/${fake}`, permission: 'orderbook_order:read' },
    { method: 'GET', path: `/v1/orderbook/orders/${fake}/fills`, permission: 'orderbook_order:read' },
    { method: 'DELETE', path: `/v1/orderbook/orders/${fake}`, permission: 'orderbook_order:cancel' },
    { method: 'GET', path: `/v1/orderbook/wallets/${fake}/trades`, permission: 'orderbook_order:read' },
    { method: 'GET', path: `/v1/orderbook/wallets/${fake}/balances`, permission: 'orderbook_order:read' },
  ];

  it.each(endpoints)('$method $path needs $permission (403 names it; granted, it passes the check)', async ({ method, path, body, permission }) => {
    const without: ApiClient = await org.proWith(PRO_TRADE_PERMISSIONS.filter((p) => p !== permission));
    const denied = await without.request(method, path, { body });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('FORBIDDEN');
    expect(denied.body.error.message).toContain(permission);

    // Market management is the operator's: its key is the one that holds that permission.
    const only: ApiClient = operatorOnly([permission]).length ? await k.operator() : await org.proWith([permission]);
    const allowed = await only.request(method, path, { body });
    expect(allowed.status).not.toBe(403);
    expect(allowed.status).not.toBe(401);
  });

  it('the default trading key cannot manage markets', async () => {
    const res = await org.pro().post('/v1/orderbook/markets', market('BTC-USDC'));
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('orderbook_market:manage');
  });

  it('GraphQL names the missing permission too', async () => {
    const readOnly = await org.proWith(['orderbook_market:read']);
    const res = await readOnly.graphql('mutation { cancelOrder(id: "00000000-0000-4000-8000-000000000000") { id } }');
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(res.body.errors[0].message).toContain('orderbook_order:cancel');
  });
});

describe('candles', () => {
  it('aggregates trades per interval, oldest first', async () => {
    const buyer = await k.wallet(org, 'Candle buyer');
    const seller = await k.wallet(other, 'Candle seller');
    await k.credit(org, buyer, USDC.id, units('100000', USDC.decimals));
    await k.credit(other, seller, ETH.id, units('100', ETH.decimals));
    // Clear the book from earlier tests, then trade at known prices.
    for (const o of (await org.pro().get('/v1/orderbook/orders?status=OPEN')).body.data) await org.pro().delete(`/v1/orderbook/orders/${o.id}`);
    const trade = async (price: string, quantity: string) => {
      expect((await other.pro().post('/v1/orderbook/orders', { walletId: seller, market: 'ETH-USDC', side: 'SELL', price, quantity })).status).toBe(201);
      const res = await org.pro().post('/v1/orderbook/orders', { walletId: buyer, market: 'ETH-USDC', side: 'BUY', price, quantity });
      expect(res.body.data.status).toBe('FILLED');
      return res.body.data.id as string;
    };
    const ids = [await trade('10', '1'), await trade('12', '2'), await trade('9', '1'), await trade('11', '0.5'), await trade('20', '3')];
    // Place the trades in time: three in one minute 10 minutes ago, one in the next minute, one now.
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const at = [minute - 10 * 60_000 + 1_000, minute - 10 * 60_000 + 20_000, minute - 10 * 60_000 + 40_000, minute - 9 * 60_000 + 5_000];
    for (let i = 0; i < at.length; i++) await k.db('trades').where({ takerOrderId: ids[i] }).update({ createdAt: new Date(at[i]) });

    const res = await org.pro().get('/v1/orderbook/markets/ETH-USDC/candles?interval=1m&count=30');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { time: new Date(minute - 10 * 60_000).toISOString(), open: '10', high: '12', low: '9', close: '9', volume: '4' },
      { time: new Date(minute - 9 * 60_000).toISOString(), open: '11', high: '11', low: '11', close: '11', volume: '0.5' },
      { time: new Date(minute).toISOString(), open: '20', high: '20', low: '20', close: '20', volume: '3' },
    ]);
    // A window of 5 minutes leaves the old ones out.
    const recent = await org.pro().get('/v1/orderbook/markets/ETH-USDC/candles?interval=1m&count=5');
    expect(recent.body.data).toHaveLength(1);
    // One day holds them all.
    const day = await org.pro().get('/v1/orderbook/markets/ETH-USDC/candles?interval=1d&count=2');
    const total = day.body.data.reduce((s: number, c: { volume: string }) => s + Number(c.volume), 0);
    expect(total).toBe(7.5);

    const ticker = await org.pro().get('/v1/orderbook/markets/ETH-USDC/ticker');
    expect(ticker.body.data).toMatchObject({ market: 'ETH-USDC', last: '20', open24h: '10', high24h: '20', low24h: '9', volume24h: '7.5', change24h: '10', changePercent24h: '100', trades24h: 5 });
  });

  it('validates interval and count, and 404s an unknown market', async () => {
    expect((await org.pro().get('/v1/orderbook/markets/ETH-USDC/candles?interval=2m')).status).toBe(422);
    const tooMany = await org.pro().get('/v1/orderbook/markets/ETH-USDC/candles?interval=1m&count=501');
    expect(tooMany.status).toBe(422);
    expect((await org.pro().get('/v1/orderbook/markets/ETH-USDC/candles?interval=1m&count=500')).status).toBe(200);
    expect((await org.pro().get('/v1/orderbook/markets/NOPE-USDC/candles?interval=1m')).status).toBe(404);
  });
});
