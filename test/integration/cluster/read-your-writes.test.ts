import { ApiClient } from '../../support/api-client';
import { BookKeel, BookOrg, units } from '../orderbook/support';
import type { CreateMarketInput } from '../../../src/modules/markets/market.types';
import { ClusterNode, leaderOf, SHARD, startNode, stopNodes } from './support';

/**
 * Two order-book nodes (child processes) on one PostgreSQL: the leader of ETH-USDC takes the
 * orders, and a client that got its 201 reads, at once and on the other node, what that commit
 * wrote: the order by id and in the list, its wallet's balances (the lock, or the fill's moves,
 * whole) and the book as the leader's engine holds it.
 */
let k: BookKeel;
const nodes: ClusterNode[] = [];
const traders: { org: BookOrg; walletId: string }[] = [];
let ETH: { id: string; decimals: number };
let USDC: { id: string; decimals: number };
let leader: ClusterNode;
let follower: ClusterNode;

const clientOn = (node: ClusterNode, org: BookOrg) => new ApiClient(node.url, { apiKey: org.proKey!, orgId: org.orgId });

/** A wallet's ledger balances as a node answers them, in base units. */
async function balancesOn(node: ClusterNode, t: { org: BookOrg; walletId: string }): Promise<Record<'ETH' | 'USDC', { available: bigint; locked: bigint }>> {
  const res = await clientOn(node, t.org).get(`/v1/orderbook/wallets/${t.walletId}/balances`);
  expect(res.status).toBe(200);
  const of = (symbol: 'ETH' | 'USDC', decimals: number) => {
    const b = res.body.data.find((x: { symbol: string }) => x.symbol === symbol) ?? { available: '0', locked: '0' };
    return { available: units(b.available, decimals), locked: units(b.locked, decimals) };
  };
  return { ETH: of('ETH', ETH.decimals), USDC: of('USDC', USDC.decimals) };
}

async function bookOn(node: ClusterNode, org: BookOrg) {
  const res = await clientOn(node, org).get('/v1/orderbook/markets/ETH-USDC/book');
  expect(res.status).toBe(200);
  return res.body.data;
}

beforeAll(async () => {
  k = await BookKeel.start({ KEEL_ROLES: 'api' });
  ({ ETH, USDC } = await k.assets());
  await k.services.markets.create({ symbol: 'ETH-USDC', baseAssetId: ETH.id, quoteAssetId: USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '0', makerFee: '0.001', takerFee: '0.002' } as CreateMarketInput);
  for (const org of [await k.createOrg(), await k.createOrg()]) {
    const walletId = await k.wallet(org);
    await k.credit(org, walletId, ETH.id, units('100', ETH.decimals));
    await k.credit(org, walletId, USDC.id, units('1000000', USDC.decimals));
    traders.push({ org, walletId });
  }
  // The first node takes every shard; the second stands by and answers reads.
  nodes.push(await startNode(k.config, 'node-first'));
  nodes.push(await startNode(k.config, 'node-second'));
  const leaderId = await leaderOf(clientOn(nodes[1], traders[0].org), SHARD['ETH-USDC']);
  leader = nodes.find((n) => n.nodeId === leaderId)!;
  follower = nodes.find((n) => n !== leader)!;
}, 90_000);

afterAll(async () => {
  await stopNodes(nodes);
  await k?.stop();
});

test('a resting order, once answered 201, is read at once on the other node: by id, in the list, its lock in the balances, its level in the book', async () => {
  const [buyer] = traders;
  for (let i = 0; i < 10; i++) {
    const before = await balancesOn(follower, buyer);
    const price = (1900 + i).toFixed(2);
    const placed = await clientOn(leader, buyer.org).post('/v1/orderbook/orders', { walletId: buyer.walletId, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price, quantity: '0.5', timeInForce: 'GTC' });
    expect(placed.status).toBe(201);
    const id = placed.body.data.id;

    const byId = await clientOn(follower, buyer.org).get(`/v1/orderbook/orders/${id}`);
    expect(byId.status).toBe(200);
    expect(byId.body.data).toMatchObject({ id, status: 'OPEN', remainingQuantity: placed.body.data.remainingQuantity, sequence: placed.body.data.sequence });
    const list = await clientOn(follower, buyer.org).get('/v1/orderbook/orders?market=ETH-USDC&limit=50');
    expect(list.status).toBe(200);
    expect(list.body.data.map((o: { id: string }) => o.id)).toContain(id);

    // The lock moved whole from available to locked: no part of the commit is missing.
    const after = await balancesOn(follower, buyer);
    const lock = after.USDC.locked - before.USDC.locked;
    expect(lock).toBeGreaterThanOrEqual(units(String(Number(price) * 0.5), USDC.decimals));
    expect(before.USDC.available - after.USDC.available).toBe(lock);

    // The follower reads the book from the record; it is the book the leader's engine holds.
    const book = await bookOn(follower, buyer.org);
    expect(book).toMatchObject({ bids: (await bookOn(leader, buyer.org)).bids });
    expect(book.bids.find((l: { price: string }) => Number(l.price) === Number(price))).toMatchObject({ orders: 1 });
  }
}, 60_000);

test('a crossing order, once answered 201, is read at once on the other node: both orders filled, both wallets moved by the trade', async () => {
  const [buyer, seller] = traders;
  const resting = await clientOn(leader, buyer.org).post('/v1/orderbook/orders', { walletId: buyer.walletId, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: '2500.00', quantity: '0.2', timeInForce: 'GTC' });
  expect(resting.status).toBe(201);
  const buyerBefore = await balancesOn(follower, buyer);
  const sellerBefore = await balancesOn(follower, seller);

  const taker = await clientOn(leader, seller.org).post('/v1/orderbook/orders', { walletId: seller.walletId, market: 'ETH-USDC', side: 'SELL', type: 'LIMIT', price: '2500.00', quantity: '0.2', timeInForce: 'GTC' });
  expect(taker.status).toBe(201);
  expect(taker.body.data.status).toBe('FILLED');

  const takerRead = await clientOn(follower, seller.org).get(`/v1/orderbook/orders/${taker.body.data.id}`);
  expect(takerRead.body.data).toMatchObject({ status: 'FILLED', filledQuantity: '0.2', fee: taker.body.data.fee });
  const makerRead = await clientOn(follower, buyer.org).get(`/v1/orderbook/orders/${resting.body.data.id}`);
  expect(makerRead.body.data).toMatchObject({ status: 'FILLED', filledQuantity: '0.2' });

  const base = units('0.2', ETH.decimals);
  const buyerAfter = await balancesOn(follower, buyer);
  const sellerAfter = await balancesOn(follower, seller);
  expect(buyerAfter.ETH.available - buyerBefore.ETH.available).toBe(base);
  expect(sellerBefore.ETH.available - sellerAfter.ETH.available).toBe(base);
  // The seller receives price × quantity less its fee; the buyer pays price × quantity and its fee (the rest of its lock is released).
  const notional = units('500', USDC.decimals);
  expect(sellerAfter.USDC.available - sellerBefore.USDC.available).toBe(notional - units(taker.body.data.fee, USDC.decimals));
  const total = (b: { available: bigint; locked: bigint }) => b.available + b.locked;
  expect(total(buyerBefore.USDC) - total(buyerAfter.USDC)).toBe(notional + units(makerRead.body.data.fee, USDC.decimals));
  expect(buyerAfter.USDC.locked).toBeLessThan(buyerBefore.USDC.locked);

  const book = await bookOn(follower, buyer.org);
  expect(book.bids.find((l: { price: string }) => Number(l.price) === 2500)).toBeUndefined();
  expect(book).toMatchObject({ bids: (await bookOn(leader, buyer.org)).bids, asks: (await bookOn(leader, buyer.org)).asks });
}, 60_000);

test("the other node answers depth at any number of levels and the ticker's best bid and ask from the record, as the leader's engine has them, at the same sequence", async () => {
  const [buyer, seller] = traders;
  const ask = await clientOn(leader, seller.org).post('/v1/orderbook/orders', { walletId: seller.walletId, market: 'ETH-USDC', side: 'SELL', type: 'LIMIT', price: '3100.00', quantity: '0.1', timeInForce: 'GTC' });
  expect(ask.status).toBe(201);
  for (const levels of [1, 3, 500]) {
    const read = async (node: ClusterNode) => (await clientOn(node, buyer.org).get(`/v1/orderbook/markets/ETH-USDC/book?levels=${levels}`)).body.data;
    const [there, here] = [await read(leader), await read(follower)];
    expect(here).toMatchObject({ sequence: there.sequence, bids: there.bids, asks: there.asks });
    expect(here.bids.length).toBe(Math.min(levels, 10));
  }
  const ticker = async (node: ClusterNode) => (await clientOn(node, buyer.org).get('/v1/orderbook/markets/ETH-USDC/ticker')).body.data;
  const [there, here] = [await ticker(leader), await ticker(follower)];
  expect(here).toMatchObject({ bestBid: there.bestBid, bestAsk: '3100' });
  expect(there.bestBid).not.toBeNull();
}, 60_000);
