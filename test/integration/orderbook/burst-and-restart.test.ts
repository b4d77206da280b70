import { BookKeel, BookOrg, lockMismatches, units } from './support';

/**
 * A seeded random burst of concurrent orders and cancels on two markets sharing wallets, then:
 * the ledger conserves every asset, locks match the open orders, the engine's books match the
 * order record, and a restart on the same database rebuilds identical books.
 */
let k: BookKeel;
let orgs: BookOrg[];
const wallets: { org: BookOrg; id: string }[] = [];
const MARKETS = ['ETH-USDC', 'ETH-DAI'];

function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

beforeAll(async () => {
  k = await BookKeel.start();
  orgs = [await k.createOrg(), await k.createOrg(), await k.createOrg()];
  const { ETH, USDC, DAI } = await k.assets();
  for (const [symbol, quote] of [
    ['ETH-USDC', USDC],
    ['ETH-DAI', DAI],
  ] as const) {
    const res = await (await k.operator()).post('/v1/orderbook/markets', { symbol, baseAssetId: ETH.id, quoteAssetId: quote.id, tickSize: '0.01', lotSize: '0.001', minNotional: '0', makerFee: '0.0007', takerFee: '0.0013' });
    expect(res.status).toBe(201);
  }
  for (const org of orgs) {
    for (const name of ['W1', 'W2']) {
      const id = await k.wallet(org, name);
      wallets.push({ org, id });
      await k.credit(org, id, ETH.id, units('40', ETH.decimals));
      await k.credit(org, id, USDC.id, units('4000', USDC.decimals));
      await k.credit(org, id, DAI.id, units('4000', DAI.decimals));
    }
  }
});
afterAll(() => k?.stop());

async function depths() {
  const out: Record<string, unknown> = {};
  for (const symbol of MARKETS) {
    const res = await orgs[0].pro().get(`/v1/orderbook/markets/${symbol}/book?levels=500`);
    expect(res.status).toBe(200);
    out[symbol] = { bids: res.body.data.bids, asks: res.body.data.asks, sequence: res.body.data.sequence };
  }
  return out;
}

describe('a random burst of orders and cancels', () => {
  it('keeps every balance consistent', async () => {
    const random = rng(20261123);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
    const open: { org: BookOrg; id: string }[] = [];
    const statuses = new Map<number, number>();
    const codes = new Map<string, number>();
    for (let batch = 0; batch < 25; batch++) {
      const ops = Array.from({ length: 12 }, () => {
        if (open.length && random() < 0.3) {
          const [victim] = open.splice(Math.floor(random() * open.length), 1);
          return () => victim.org.pro().delete(`/v1/orderbook/orders/${victim.id}`);
        }
        const w = pick(wallets);
        const side = random() < 0.5 ? 'BUY' : 'SELL';
        const market = pick(MARKETS);
        const type = random() < 0.1 ? 'MARKET' : 'LIMIT';
        const body: Record<string, unknown> = { walletId: w.id, market, side, type, quantity: (0.001 * (1 + Math.floor(random() * 2000))).toFixed(3) };
        if (type === 'LIMIT') {
          body.price = (95 + Math.floor(random() * 1000) / 100).toFixed(2);
          body.timeInForce = pick(['GTC', 'GTC', 'GTC', 'IOC', 'FOK']);
          if (random() < 0.1) body.postOnly = true;
        }
        return async () => {
          const res = await w.org.pro().post('/v1/orderbook/orders', body);
          if (res.status === 201 && ['OPEN', 'PARTIALLY_FILLED'].includes(res.body.data.status)) open.push({ org: w.org, id: res.body.data.id });
          return res;
        };
      });
      const results = await Promise.all(ops.map((op) => op()));
      for (const r of results) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.body?.error) codes.set(r.body.error.code, (codes.get(r.body.error.code) ?? 0) + 1);
      }
    }
    // Only expected outcomes: placed, cancelled, or refused for a business reason.
    expect([...statuses.keys()].every((s) => [200, 201, 400, 409].includes(s))).toBe(true);
    expect([...codes.keys()].every((c) => ['INSUFFICIENT_FUNDS', 'POST_ONLY_WOULD_TAKE', 'ORDER_NOT_CANCELLABLE'].includes(c))).toBe(true);
    expect((statuses.get(201) ?? 0) > 100).toBe(true);
    const trades = await k.db('trades').count({ n: '*' }).first();
    expect(Number(trades!.n)).toBeGreaterThan(20);

    // Conservation per asset, and the balance table matches its journal.
    for (const row of await k.services.ledger.invariant()) expect(row).toMatchObject({ holds: true });
    const fees = await k.db('ledger_entries').where({ kind: 'fee' }).sum({ s: 'available_delta' }).first();
    expect(BigInt(fees!.s)).toBeGreaterThan(0n);

    // Every wallet's locked amount is exactly what its open orders hold; ended orders hold nothing.
    expect(await lockMismatches(k.db)).toEqual([]);
    const stale = await k.db('orders').whereNotIn('status', ['OPEN', 'PARTIALLY_FILLED']).where('lockedAmount', '<>', 0).count({ n: '*' }).first();
    expect(Number(stale!.n)).toBe(0);

    // The engine's books are the open orders of the record.
    for (const symbol of MARKETS) {
      const book = (await orgs[0].pro().get(`/v1/orderbook/markets/${symbol}/book?levels=500`)).body.data;
      const { rows } = await k.db.raw(
        `SELECT o.side, o.price::text AS price, count(*)::int AS orders, sum(o.remaining_lots)::bigint AS lots
           FROM orders o JOIN markets m ON m.id = o.market_id
          WHERE m.symbol = ? AND o.status IN ('OPEN', 'PARTIALLY_FILLED') GROUP BY 1, 2`,
        [symbol],
      );
      const fromDb = (side: string) =>
        rows
          .filter((r: { side: string }) => r.side === side)
          .map((r: { price: string; orders: number; lots: string }) => ({ price: Number(r.price), orders: r.orders, quantity: Number(r.lots) / 1000 }))
          .sort((x: { price: number }, y: { price: number }) => (side === 'BUY' ? y.price - x.price : x.price - y.price));
      const fromBook = (levels: { price: string; quantity: string; orders: number }[]) => levels.map((l) => ({ price: Number(l.price), orders: l.orders, quantity: Number(l.quantity) }));
      expect(fromBook(book.bids)).toEqual(fromDb('BUY'));
      expect(fromBook(book.asks)).toEqual(fromDb('SELL'));
      if (book.bids.length && book.asks.length) expect(Number(book.bids[0].price)).toBeLessThan(Number(book.asks[0].price));
    }
  });

  it('rebuilds identical books after a restart on the same database, and keeps time priority', async () => {
    const before = await depths();
    expect((before['ETH-USDC'] as { asks: unknown[] }).asks.length + (before['ETH-USDC'] as { bids: unknown[] }).bids.length).toBeGreaterThan(0);
    await k.restart();
    const after = await depths();
    expect(after).toEqual(before);

    // The first order at the best ask (by time) is the one a new taker meets first.
    const best = (after['ETH-USDC'] as { asks: { price: string }[] }).asks[0];
    if (best) {
      const { rows } = await k.db.raw(
        `SELECT o.id, o.wallet_id AS "walletId" FROM orders o JOIN markets m ON m.id = o.market_id
          WHERE m.symbol = 'ETH-USDC' AND o.side = 'SELL' AND o.price = ?::numeric AND o.status IN ('OPEN', 'PARTIALLY_FILLED')
          ORDER BY o.rest_sequence LIMIT 1`,
        [best.price],
      );
      const taker = wallets.find((w) => w.id !== rows[0].walletId)!;
      await k.credit(taker.org, taker.id, (await k.assets()).USDC.id, units('1000', 6));
      const res = await taker.org.pro().post('/v1/orderbook/orders', { walletId: taker.id, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: best.price, quantity: '0.001', timeInForce: 'IOC' });
      expect(res.status).toBe(201);
      expect(res.body.data.status).toBe('FILLED');
      const fills = await taker.org.pro().get(`/v1/orderbook/orders/${res.body.data.id}/fills`);
      const trade = (await taker.org.pro().get(`/v1/orderbook/wallets/${taker.id}/trades?limit=1`)).body.data[0];
      expect(fills.body.data[0].tradeId).toBe(trade.id);
      expect(trade.makerOrderId).toBe(rows[0].id);
      expect(BigInt(trade.sequence)).toBeGreaterThan(BigInt((before['ETH-USDC'] as { sequence: string }).sequence));
    }
    for (const row of await k.services.ledger.invariant()) expect(row).toMatchObject({ holds: true });
  });
});
