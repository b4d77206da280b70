import { netTrades, NettableTrade } from '../../../src/modules/settlement/netting';

const ETH = { id: 'eth', decimals: 18 };
const USDC = { id: 'usdc', decimals: 6 };
const trade = (maker: string, taker: string, takerSide: 'BUY' | 'SELL', quantity: string, quoteAmount: string, makerFee: string, takerFee: string): NettableTrade => ({
  id: `${maker}-${taker}`,
  makerWalletId: maker,
  takerWalletId: taker,
  takerSide,
  quantity,
  quoteAmount,
  makerFee,
  takerFee,
  base: ETH,
  quote: USDC,
});
const byKey = (deltas: { walletId: string; assetId: string; amount: bigint }[]) => Object.fromEntries(deltas.map((d) => [`${d.walletId}:${d.assetId}`, d.amount]));

describe('netting a batch per wallet and asset', () => {
  test('one trade: the buyer pays notional + its fee and gets the base; the seller the reverse, less its fee', () => {
    const deltas = netTrades([trade('m', 't', 'BUY', '1.5', '3000', '3', '6')]);
    expect(byKey(deltas)).toEqual({ 't:eth': 1_500_000_000_000_000_000n, 't:usdc': -3_006_000_000n, 'm:eth': -1_500_000_000_000_000_000n, 'm:usdc': 2_997_000_000n });
  });

  test('opposite trades between the same wallets cancel out to the fees; zero deltas are left out; per asset the deltas sum to minus the fees', () => {
    const trades = [trade('a', 'b', 'BUY', '1', '2000', '2', '4'), trade('a', 'b', 'SELL', '1', '2000', '2', '4')];
    const deltas = netTrades(trades);
    expect(byKey(deltas)).toEqual({ 'a:usdc': -4_000_000n, 'b:usdc': -8_000_000n });
    const fees = { eth: 0n, usdc: 2n * (2_000_000n + 4_000_000n) };
    for (const asset of ['eth', 'usdc'] as const) expect(deltas.filter((d) => d.assetId === asset).reduce((s, d) => s + d.amount, 0n)).toBe(-fees[asset]);
  });

  test('many trades among few wallets net to at most one delta per wallet and asset', () => {
    const wallets = ['a', 'b', 'c'];
    const trades = Array.from({ length: 300 }, (_, i) => trade(wallets[i % 3], wallets[(i + 1) % 3], i % 2 ? 'BUY' : 'SELL', '0.01', '20', '0.02', '0.04'));
    const deltas = netTrades(trades);
    expect(deltas.length).toBeLessThanOrEqual(6);
  });
});
