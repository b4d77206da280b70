import type { Knex } from 'knex';
import type { TestKeel, TestOrg } from './keel';

/** A master wallet on the chain, given ETH and USDC by the dev faucet ('0': none). */
export async function fundedWallet(blockchainId: string, org: TestOrg, name: string, eth: string, usdc: string): Promise<{ id: string; walletAddress: string }> {
  const w = (await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name } })).body.data;
  for (const [asset, amount] of [['ETH', eth], ['USDC', usdc]]) {
    if (amount === '0') continue;
    const res = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId, address: w.walletAddress, asset, amount } });
    expect(res.status).toBe(200);
  }
  return w;
}

/** A wallet's order-book balances by symbol. */
export async function orderbookBalances(org: TestOrg, walletId: string): Promise<Record<string, { available: string; locked: string }>> {
  const res = await org.pro.request('GET', `/v1/orderbook/wallets/${walletId}/balances`);
  return Object.fromEntries(res.body.data.map((x: { symbol: string; available: string; locked: string }) => [x.symbol, x]));
}

/** One ETH-USDC trade: the maker rests, the taker takes it whole; the trade's id. */
export async function ethUsdcTrade(db: Knex, maker: { org: TestOrg; id: string }, taker: { org: TestOrg; id: string }, makerSide: 'BUY' | 'SELL', price: string, quantity: string): Promise<string> {
  const m = await maker.org.pro.request('POST', '/v1/orderbook/orders', { body: { walletId: maker.id, market: 'ETH-USDC', side: makerSide, type: 'LIMIT', price, quantity } });
  expect(m.status).toBe(201);
  const tk = await taker.org.pro.request('POST', '/v1/orderbook/orders', { body: { walletId: taker.id, market: 'ETH-USDC', side: makerSide === 'SELL' ? 'BUY' : 'SELL', type: 'LIMIT', price, quantity, timeInForce: 'IOC' } });
  expect(tk.body.data?.status).toBe('FILLED');
  return (await db('trades').where({ takerOrderId: tk.body.data.id }).first()).id;
}

/** The ETH-USDC market the trades above use, created by the operator. */
export async function createEthUsdcMarket(t: TestKeel, assets: Record<string, { id: string }>): Promise<void> {
  const market = await (await t.operator()).request('POST', '/v1/orderbook/markets', { body: { symbol: 'ETH-USDC', baseAssetId: assets.ETH.id, quoteAssetId: assets.USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1', makerFee: '0.001', takerFee: '0.002' } });
  expect(market.status).toBe(201);
}
