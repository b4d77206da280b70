import { Keel, startKeel } from '../../../src/app';
import { MarketStatus } from '../../../src/modules/markets/market.types';
import type { MarketService } from '../../../src/modules/markets/market.service';
import { OrderService } from '../../../src/modules/orders/order.service';
import { OrderSide } from '../../../src/modules/orders/order.domain';
import { ApiClient } from '../../support/api-client';
import { eventually } from '../../support/eventually';
import { BookKeel, BookOrg, lockMismatches, marketBody, units } from './support';

/**
 * Two order-book nodes on one database and Redis prefix enforce the same market rules: a halt or
 * a fee or minimum change made through node A binds node B's very next command, whether B heard
 * the change over Redis or not (its commit is fenced by the market's rules version).
 */
let k: BookKeel;
let nodeB: Keel;
let seller: BookOrg;
let buyer: BookOrg;
let sellerWallet: string;
let buyerWallet: string;
let marketId: string;

const SYMBOL = 'ETH-USDC';
const onB = (org: BookOrg) => new ApiClient(nodeB.pro!.url, { apiKey: org.proKey!, orgId: org.orgId });
const sell = (price = '2000', quantity = '1') => ({ walletId: sellerWallet, market: SYMBOL, side: 'SELL', type: 'LIMIT', price, quantity });
const buy = (price = '2000', quantity = '1') => ({ walletId: buyerWallet, market: SYMBOL, side: 'BUY', type: 'LIMIT', price, quantity });
/** Changes the market through node A's service (market management's key is being reworked elsewhere). */
const changeOnA = (input: { status?: MarketStatus; takerFee?: string; makerFee?: string; minNotional?: string }) => k.services.markets.update(SYMBOL, input);

beforeAll(async () => {
  // Node A competes for no shard, so node B leads every market and takes its orders.
  k = await BookKeel.start({ ORDERBOOK_LEAD_SHARDS: 'none' });
  nodeB = await startKeel({ ...k.config, KEEL_ROLES: 'orderbook', ORDERBOOK_LEAD_SHARDS: 'all' });
  seller = await k.createOrg();
  buyer = await k.createOrg();
  const { ETH, USDC } = await k.assets();
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody(SYMBOL, ETH, USDC))).status).toBe(201);
  marketId = (await k.services.markets.row(SYMBOL)).id;
  sellerWallet = await k.wallet(seller);
  buyerWallet = await k.wallet(buyer);
  await k.credit(seller, sellerWallet, ETH.id, units('100', ETH.decimals));
  await k.credit(buyer, buyerWallet, USDC.id, units('1000000', USDC.decimals));
}, 60_000);
afterAll(async () => {
  await nodeB?.stop();
  await k?.stop();
});

/** Node B has its engine for the market loaded (with the rules as they are now). */
async function warmB(): Promise<void> {
  await nodeB.services.orders.warmUp([marketId]);
  expect((await onB(buyer).get(`/v1/orderbook/markets/${SYMBOL}/book`)).status).toBe(200);
}

function rulesTests(label: string, setUp: () => Promise<void>, tearDown: () => Promise<void>) {
  describe(label, () => {
    beforeAll(setUp);
    afterAll(tearDown);
    afterEach(() => changeOnA({ status: MarketStatus.ACTIVE, makerFee: '0.001', takerFee: '0.002', minNotional: '1' }));

    it('a halt on node A refuses the next order on node B with MARKET_HALTED (REST and GraphQL); a resume lets it in again', async () => {
      await warmB();
      await changeOnA({ status: MarketStatus.HALTED });

      const refused = await onB(seller).post('/v1/orderbook/orders', sell('2500'));
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('MARKET_HALTED');
      const gql = await onB(seller).graphql('mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { id } }', { input: sell('2500') });
      expect(gql.body.errors[0].extensions.code).toBe('MARKET_HALTED');

      await changeOnA({ status: MarketStatus.ACTIVE });
      const accepted = await onB(seller).post('/v1/orderbook/orders', sell('2500'));
      expect(accepted.status).toBe(201);
      expect((await onB(seller).delete(`/v1/orderbook/orders/${accepted.body.data.id}`)).status).toBe(200);
    });

    it("a fee change on node A is charged by node B's next trade", async () => {
      const resting = await onB(seller).post('/v1/orderbook/orders', sell());
      expect(resting.status).toBe(201);
      await changeOnA({ takerFee: '0.005', makerFee: '0.0025' });

      const taken = await onB(buyer).post('/v1/orderbook/orders', buy());
      expect(taken.status).toBe(201);
      expect(taken.body.data.status).toBe('FILLED');
      const trade = await k.db('trades').where({ takerOrderId: taken.body.data.id }).first();
      expect({ takerFee: Number(trade.takerFee), makerFee: Number(trade.makerFee) }).toEqual({ takerFee: 10, makerFee: 5 });
    });

    it('a lowered minimum on node A admits on node B what the old minimum refused', async () => {
      await changeOnA({ minNotional: '100' });
      await warmB();
      const small = await onB(seller).post('/v1/orderbook/orders', sell('2500', '0.01'));
      expect(small.status).toBe(422);
      expect(small.body.error.code).toBe('BELOW_MIN_NOTIONAL');

      await changeOnA({ minNotional: '1' });
      const admitted = await onB(seller).post('/v1/orderbook/orders', sell('2500', '0.01'));
      expect(admitted.status).toBe(201);
      expect((await onB(seller).delete(`/v1/orderbook/orders/${admitted.body.data.id}`)).status).toBe(200);
    });

    it('orders committed before the halt stay; none is committed after it', async () => {
      await warmB();
      const answers: { status: number; id?: string; code?: string; after: boolean }[] = [];
      let halted = false;
      const client = async () => {
        for (let i = 0; i < 200; i++) {
          const afterHalt = halted;
          const res = await onB(buyer).post('/v1/orderbook/orders', buy('1000', '0.01'));
          answers.push({ status: res.status, id: res.body.data?.id, code: res.body.error?.code, after: afterHalt });
          if (res.body.error?.code === 'MARKET_HALTED') return;
        }
      };
      const flow = Promise.all([client(), client(), client()]);
      await new Promise((r) => setTimeout(r, 300));
      await changeOnA({ status: MarketStatus.HALTED });
      halted = true;
      const sequenceAtHalt = (await k.db('markets').where({ id: marketId }).first()).sequence;
      await flow;

      expect((await k.db('markets').where({ id: marketId }).first()).sequence).toBe(sequenceAtHalt);
      expect(answers.filter((a) => a.after).every((a) => a.code === 'MARKET_HALTED')).toBe(true);
      const accepted = answers.filter((a) => a.status === 201).map((a) => a.id);
      expect(accepted.length).toBeGreaterThan(0);
      const stored = await k.db('orders').whereIn('id', accepted as string[]).count({ n: '*' }).first();
      expect(Number(stored!.n)).toBe(accepted.length);
      expect(answers.every((a) => a.status === 201 || a.code === 'MARKET_HALTED')).toBe(true);

      await changeOnA({ status: MarketStatus.ACTIVE });
      for (const id of accepted) await onB(buyer).delete(`/v1/orderbook/orders/${id}`);
      for (const row of await k.services.ledger.invariant()) expect(row).toMatchObject({ holds: true });
    });
  });
}

rulesTests(
  'node B listening for market changes',
  async () => undefined,
  async () => undefined,
);

it('node B hears a change made on node A without any command of its own', async () => {
  const heard: string[] = [];
  nodeB.services.markets.onChange((id) => void heard.push(id));
  await changeOnA({ takerFee: '0.003' });
  await eventually(() => heard.includes(marketId));
  await changeOnA({ takerFee: '0.002' });
});

it('a fee raised while a BUY rests never takes what the rest of it needs: every later SELL fills it, and it ends having paid exactly its notional', async () => {
  const usdcOf = async (walletId: string) => {
    const res = await buyer.pro().get(`/v1/orderbook/wallets/${walletId}/balances`);
    return res.body.data.find((b: { symbol: string }) => b.symbol === 'USDC') as { available: string; locked: string };
  };
  await changeOnA({ makerFee: '0', takerFee: '0' });
  try {
    const before = await usdcOf(buyerWallet);
    const bid = await onB(buyer).post('/v1/orderbook/orders', buy('2000', '0.003'));
    expect(bid.status).toBe(201);
    expect(bid.body.data.status).toBe('OPEN');
    expect((await k.db('orders').where({ id: bid.body.data.id }).first()).lockedAmount).toBe('6000000'); // 6 USDC: its notional, no fee
    expect((await (await k.operator()).patch(`/v1/orderbook/markets/${SYMBOL}`, { makerFee: '0.001', takerFee: '0.002' })).status).toBe(200);

    for (const order of [sell('2000', '0.001'), { walletId: sellerWallet, market: SYMBOL, side: 'SELL', type: 'MARKET', quantity: '0.001' }, sell('2000', '0.001')]) {
      const taken = await onB(seller).post('/v1/orderbook/orders', order);
      expect(taken.status).toBe(201);
      expect(taken.body.data).toMatchObject({ status: 'FILLED', fee: '0.004' }); // the sellers' taker fees come out of their proceeds
    }
    const trades = await k.db('trades').where({ makerOrderId: bid.body.data.id });
    expect(trades.map((t) => Number(t.makerFee))).toEqual([0, 0, 0]); // the raised maker fee capped: all 6 USDC are the notional's
    expect((await onB(buyer).get(`/v1/orderbook/orders/${bid.body.data.id}`)).body.data).toMatchObject({ status: 'FILLED', filledQuantity: '0.003', fee: '0' });
    const after = await usdcOf(buyerWallet);
    expect(Number(before.available) - Number(after.available)).toBeCloseTo(6, 9);
    expect(after.locked).toBe(before.locked);
    for (const row of await k.services.ledger.invariant()) expect(row).toMatchObject({ holds: true });
    expect(await lockMismatches(k.db)).toEqual([]);
  } finally {
    await changeOnA({ makerFee: '0.001', takerFee: '0.002' });
  }
});

it('a command whose market keeps changing under it is answered 503 SERVICE_UNAVAILABLE, having written nothing', async () => {
  // Rules that are never the stored ones: every rules-based refusal is found stale and run again.
  const restless: MarketService = Object.create(k.services.markets, { rulesVersion: { value: async () => -1 } });
  const orders = new OrderService(k.db, restless, k.services.ledger, k.keel.platform.unitOfWork);
  await changeOnA({ status: MarketStatus.HALTED });
  const ordersBefore = await k.db('orders').count({ n: '*' }).first();
  try {
    const placing = orders.place(seller.orgId, { walletId: sellerWallet, market: SYMBOL, side: OrderSide.SELL, price: '2000', quantity: '1' });
    await expect(placing).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(await k.db('orders').count({ n: '*' }).first()).toEqual(ordersBefore);
  } finally {
    await changeOnA({ status: MarketStatus.ACTIVE });
  }
});

// Redis messages are hints: a node that misses them (Redis away, reconnecting) still obeys the
// rules, because its commit is refused and a rules-based refusal is checked against the record.
rulesTests(
  'node B deaf to market changes',
  () => nodeB.services.markets.stopListening(),
  () => nodeB.services.markets.listenForChanges(),
);
