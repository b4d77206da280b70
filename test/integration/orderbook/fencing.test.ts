import { BookKeel, BookOrg, marketBody, units } from './support';
import { OrderService } from '../../../src/modules/orders/order.service';
import { OrderSide } from '../../../src/modules/orders/order.domain';

/**
 * A market's commits are fenced by its sequence: a process whose engine is behind the record
 * (another process wrote to the market) has its commit refused, nothing written, reloads the
 * market from PostgreSQL and runs the command again.
 */
let k: BookKeel;
let seller: BookOrg;
let buyer: BookOrg;
let sellerWallet: string;
let buyerWallet: string;

beforeAll(async () => {
  k = await BookKeel.start();
  seller = await k.createOrg();
  buyer = await k.createOrg();
  const { ETH, USDC } = await k.assets();
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  sellerWallet = await k.wallet(seller);
  buyerWallet = await k.wallet(buyer);
  await k.credit(seller, sellerWallet, ETH.id, units('10', ETH.decimals));
  await k.credit(buyer, buyerWallet, USDC.id, units('10000', USDC.decimals));
});
afterAll(() => k?.stop());

describe('two processes writing one market', () => {
  it('refuses the stale one, which reloads and then matches against what the other wrote', async () => {
    // A second order service on the same database, its engine loaded before the SELL below exists.
    const other = new OrderService(k.db, k.services.markets, k.services.ledger, k.keel.platform.unitOfWork);
    const market = await k.services.markets.row('ETH-USDC');
    await other.warmUp([market.id]);

    const sell = await seller.pro().post('/v1/orderbook/orders', { walletId: sellerWallet, market: 'ETH-USDC', side: 'SELL', type: 'LIMIT', price: '2000', quantity: '1' });
    expect(sell.status).toBe(201);

    const buy = await other.place(buyer.orgId, { walletId: buyerWallet, market: 'ETH-USDC', side: OrderSide.BUY, price: '2000', quantity: '1' });
    expect(buy.status).toBe('FILLED');
    const sold = await seller.pro().get(`/v1/orderbook/orders/${sell.body.data.id}`);
    expect(sold.body.data.status).toBe('FILLED');

    const trades = await k.db('trades').where({ marketId: market.id });
    expect(trades).toHaveLength(1);
    const sequences = (await k.db('orders').where({ marketId: market.id }).select('sequence')).map((r: { sequence: string }) => r.sequence);
    expect(new Set(sequences).size).toBe(sequences.length);
    expect((await k.services.ledger.invariant()).every((x) => x.holds)).toBe(true);
  });
});
