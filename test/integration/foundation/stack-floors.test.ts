import type { FastifyInstance } from 'fastify';
import { Pool } from 'pg';
import { stackFloorApp } from '../../../bench/http-stack-floor-server';
import { ordersStackFloorApp, storedAsOneRow } from '../../../bench/orders-stack-floor-server';
import { groupCommittedOrders } from '../../../bench/group-commit';
import { ordersServiceFloorApp } from '../../../bench/orders-service-floor-server';
import { ordersStackWorkFloorApp } from '../../../bench/orders-stack-work-floor-server';
import { BookKeel, BookOrg, marketBody, units } from '../orderbook/support';

/**
 * The benchmarks' stack floors stand for "the same request with none of Keel's layers": they must
 * answer what Keel answers, in the same envelope and with the same fields, or the ratios measured
 * against them mean nothing.
 */
let k: BookKeel;
let org: BookOrg;
let pool: Pool;

/** The floor listening on loopback (Fastify's inject needs an ES module jest cannot load), as the benchmark calls it. */
async function listening(app: FastifyInstance): Promise<string> {
  return app.listen({ port: 0, host: '127.0.0.1' });
}

beforeAll(async () => {
  k = await BookKeel.start();
  org = await k.createOrg();
  pool = new Pool({ connectionString: k.config.DATABASE_URL, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await k?.stop();
});

test("the read's floor answers GET /v1/api-keys with Keel's body and rate-limit headers", async () => {
  const floor = await stackFloorApp({ pool, organizationId: org.orgId }, k.keel.platform.rateLimiter);
  try {
    const keel = await org.core().get('/v1/api-keys');
    expect(keel.status).toBe(200);
    const answer = await fetch(`${await listening(floor)}/`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual(keel.body);
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(answer.headers.get(header)).toMatch(/^\d+$/);
  } finally {
    await floor.close();
  }
});

test("the read's floor answers a path with no route as Keel does: 404, the error envelope, the rate-limit headers", async () => {
  const floor = await stackFloorApp({ pool, organizationId: org.orgId }, k.keel.platform.rateLimiter);
  try {
    const keel = await org.core().get('/v1/no-such-route');
    expect(keel.status).toBe(404);
    const answer = await fetch(`${await listening(floor)}/v1/no-such-route`);
    expect(answer.status).toBe(404);
    const body = (await answer.json()) as { error: Record<string, unknown> };
    expect(Object.keys(body.error).sort()).toEqual(Object.keys(keel.body.error).sort());
    expect(body.error).toMatchObject({ code: 'NOT_FOUND', message: keel.body.error.message, requestId: answer.headers.get('x-request-id') });
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(answer.headers.get(header)).toMatch(/^\d+$/);
  } finally {
    await floor.close();
  }
});

test("the placement's floor stores the order durably and answers with the fields of Keel's order", async () => {
  const { ETH, USDC } = await k.assets();
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  const walletId = await k.wallet(org);
  await k.credit(org, walletId, USDC.id, units('1000', USDC.decimals));
  const order = { walletId, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: '1995.5', quantity: '0.01', timeInForce: 'GTC' };
  const keel = await org.pro().post('/v1/orderbook/orders', order);
  expect(keel.status).toBe(201);

  const floor = await ordersStackFloorApp(storedAsOneRow(await groupCommittedOrders(pool)), k.keel.platform.rateLimiter);
  try {
    const answer = await fetch(`${await listening(floor)}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) });
    expect(answer.status).toBe(201);
    const placed = ((await answer.json()) as { data: Record<string, unknown> }).data;
    expect(Object.keys(placed).sort()).toEqual(Object.keys(keel.body.data).sort());
    expect(placed).toMatchObject({ status: 'OPEN', price: '1995.5', quantity: '0.01', remainingQuantity: '0.01', walletId });
    const stored = await pool.query('SELECT body FROM floor_orders WHERE id = $1', [placed.sequence]);
    expect(stored.rows[0].body).toMatchObject(order);
  } finally {
    await floor.close();
  }
});

test("the placement's service floor places through Keel's order service: Keel's answer, Keel's order, Keel's ledger", async () => {
  const { ETH, USDC } = await k.assets();
  const market = await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-DAI', ETH, USDC));
  expect(market.status).toBe(201);
  const walletId = await k.wallet(org);
  await k.credit(org, walletId, USDC.id, units('1000', USDC.decimals));
  const order = { walletId, market: 'ETH-DAI', side: 'BUY', type: 'LIMIT', price: '1995.5', quantity: '0.01', timeInForce: 'GTC' };
  const keel = await org.pro().post('/v1/orderbook/orders', order);
  expect(keel.status).toBe(201);

  const { services, platform } = k.keel;
  const { db } = platform;
  const floor = await ordersServiceFloorApp({ db, markets: services.markets, ledger: services.ledger, unitOfWork: platform.unitOfWork }, org.orgId, platform.rateLimiter);
  try {
    const answer = await fetch(`${await listening(floor)}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) });
    expect(answer.status).toBe(201);
    const placed = ((await answer.json()) as { data: Record<string, unknown> }).data;
    expect(Object.keys(placed).sort()).toEqual(Object.keys(keel.body.data).sort());
    expect(placed).toMatchObject({ status: 'OPEN', price: '1995.5', quantity: '0.01', remainingQuantity: '0.01', walletId, market: 'ETH-DAI' });
    // Keel sees the order the floor placed, and both orders' locks in the wallet's balance.
    const stored = await org.pro().get(`/v1/orderbook/orders/${placed.id}`);
    expect(stored.status).toBe(200);
    expect(stored.body.data).toMatchObject({ id: placed.id, status: 'OPEN', walletId });
    const balances = await org.pro().get(`/v1/orderbook/wallets/${walletId}/balances`);
    const usdc = (balances.body.data as { symbol: string; locked: string }[]).find((b) => b.symbol === 'USDC')!;
    expect(Number(usdc.locked)).toBeCloseTo(2 * 1995.5 * 0.01 * 1.002, 6);
  } finally {
    await floor.close();
  }
});

test("the placement's stack work floor does Keel's durable work on Keel's tables and answers with the fields of Keel's order", async () => {
  const { ETH, USDC } = await k.assets();
  const market = await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-WORK', ETH, USDC));
  expect(market.status).toBe(201);
  const marketId = market.body.data.id;
  const walletId = await k.wallet(org);
  await k.credit(org, walletId, USDC.id, units('1000', USDC.decimals));
  const order = (side: string) => ({ walletId, market: 'ETH-WORK', side, type: 'LIMIT', price: '1995.5', quantity: '0.01', timeInForce: 'GTC' });
  const keel = await org.pro().post('/v1/orderbook/orders', order('BUY'));
  expect(keel.status).toBe(201);
  const sequenceBefore = Number((await k.db('markets').where({ id: marketId }).first()).sequence);

  const floor = await ordersStackWorkFloorApp(pool, org.orgId, 'ETH-WORK', k.keel.platform.rateLimiter);
  try {
    const url = await listening(floor);
    const post = async (side: string) => {
      const answer = await fetch(`${url}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order(side)) });
      expect(answer.status).toBe(201);
      return ((await answer.json()) as { data: Record<string, unknown> }).data;
    };
    const buy = await post('BUY');
    expect(Object.keys(buy).sort()).toEqual(Object.keys(keel.body.data).sort());
    const sell = await post('SELL');
    // The floor's own book: the sell filled the floor's buy (not Keel's), the trade recorded as Keel records one.
    const rows = await k.db('orders').whereIn('id', [buy.id as string, sell.id as string]).select('id', 'status', 'sequence', 'lockedAmount');
    expect(rows.map((r) => [r.id, r.status, r.lockedAmount]).sort()).toEqual([[buy.id, 'FILLED', '0'], [sell.id, 'FILLED', '0']].sort());
    const trades = await k.db('trades').where({ marketId });
    expect(trades).toHaveLength(1);
    expect(trades[0]).toMatchObject({ makerOrderId: buy.id, takerOrderId: sell.id });
    // The sell's group journalled, per wallet, asset and kind: its lock, both sides' fills, the fees, and the maker's lock beyond what it paid going back.
    const kinds = await k.db('ledger_entries').where({ reference: `orders:${marketId}:${sequenceBefore + 2}` }).orderBy('kind').pluck('kind');
    expect(kinds).toEqual(['fee', 'fill', 'fill', 'fill', 'fill', 'lock', 'unlock']);
    expect(Number((await k.db('markets').where({ id: marketId }).first()).sequence)).toBe(sequenceBefore + 2);
    expect(Number(sell.sequence)).toBe(sequenceBefore + 2);
  } finally {
    await floor.close();
  }
});
