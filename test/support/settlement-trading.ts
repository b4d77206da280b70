import type { Knex } from 'knex';
import type { TestKeel, TestOrg } from './keel';
import { eventually } from './eventually';

/** A master wallet on the chain, given ETH and USDC by the dev faucet ('0': none). */
export async function fundedWallet(blockchainId: string, org: TestOrg, name: string, eth: string, usdc: string): Promise<{ id: string; walletAddress: string }> {
  const created = await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name } });
  expect(created.status).toBe(201);
  const w = created.body.data;
  for (const [asset, amount] of [['ETH', eth], ['USDC', usdc]]) {
    if (amount === '0') continue;
    const res = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId, address: w.walletAddress, asset, amount } });
    expect(res.status).toBe(200);
  }
  return w;
}

/**
 * Moves `amount` of an asset from the wallet's address into its trading balance in the settlement
 * contract through the API (the gas the wallet's, or `gasSponsorWalletId`'s), asked again until the
 * custody ledger holds the faucet's deposit (a loaded machine confirms it slowly), and waits until it is CONFIRMED (tradable). The trading transfer.
 * `coinAmount`: the chain's coin deposited with the token in the same transaction.
 */
export async function depositToTrading(org: TestOrg, walletId: string, assetId: string, amount: string, gasSponsorWalletId?: string, coinAmount?: string): Promise<{ id: string; status: string; transferId: string }> {
  let created: { id: string; status: string; transferId: string } | undefined;
  let refused: unknown;
  await eventually(async () => {
    const res = await org.pro.request('POST', `/v1/orderbook/wallets/${walletId}/trading/deposits`, { body: { assetId, amount, gasSponsorWalletId, coinAmount } });
    refused = res.body.error;
    if (res.status === 201) created = res.body.data;
    else expect(res.body.error?.code).toBe('INSUFFICIENT_FUNDS');
    return res.status === 201;
  }, 90_000, 200).catch((e: Error) => {
    throw new Error(`${e.message}: the deposit to trading was refused with ${JSON.stringify(refused)}`);
  });
  return eventually(async () => {
    const res = await org.pro.request('GET', `/v1/orderbook/trading-transfers/${created!.id}`);
    // 429 and 503 ask to retry shortly (a loaded machine): so it does.
    expect([200, 429, 503].includes(res.status) ? 'ok' : res.body).toBe('ok');
    return res.body.data?.status === 'CONFIRMED' ? res.body.data : undefined;
  }, 90_000, 250);
}

/** A master wallet given ETH and USDC at its address by the faucet, then `tradeEth` and `tradeUsdc` of it moved into trading ('0': none). */
export async function tradingWallet(blockchainId: string, assets: Record<string, { id: string }>, org: TestOrg, name: string, funds: { eth: string; usdc: string; tradeEth: string; tradeUsdc: string }): Promise<{ id: string; walletAddress: string }> {
  const w = await fundedWallet(blockchainId, org, name, funds.eth, funds.usdc);
  if (funds.tradeEth !== '0') await depositToTrading(org, w.id, assets.ETH.id, funds.tradeEth);
  if (funds.tradeUsdc !== '0') await depositToTrading(org, w.id, assets.USDC.id, funds.tradeUsdc);
  return w;
}

/** A wallet's order-book (trading) balances by symbol. */
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
