import { contractMustHold, heldBack, netTrades, NettableTrade, runningDeltas } from '../../../src/modules/settlement/netting';

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

describe('what a wallet\'s unsettled trades hold back in the contract (trades settle one after another, in settlement order)', () => {
  const UNIT = { id: 'u', decimals: 0 };
  const COIN = { id: 'c', decimals: 0 };
  /** A random trade among three wallets, whole units, small numbers: brute force stays cheap. */
  const randomTrade = (rnd: () => number, i: number): NettableTrade => {
    const wallets = ['x', 'y', 'z'];
    const maker = wallets[Math.floor(rnd() * 3)];
    const taker = wallets.filter((w) => w !== maker)[Math.floor(rnd() * 2)];
    const quantity = 1 + Math.floor(rnd() * 4);
    return { id: `t${i}`, makerWalletId: maker, takerWalletId: taker, takerSide: rnd() < 0.5 ? 'BUY' : 'SELL', quantity: String(quantity), quoteAmount: String(quantity * (1 + Math.floor(rnd() * 3))), makerFee: String(Math.floor(rnd() * 2)), takerFee: String(Math.floor(rnd() * 2)), base: UNIT, quote: COIN };
  };
  /** Settles the trades one by one from `contract`: false as soon as one would overdraw the wallet. */
  const settles = (trades: NettableTrade[], walletId: string, assetId: string, contract: bigint) => {
    let balance = contract;
    if (balance < 0n) return false; // a withdrawal is paid out of the contract first
    for (const t of trades) {
      balance += netTrades([t]).find((d) => d.walletId === walletId && d.assetId === assetId)?.amount ?? 0n;
      if (balance < 0n) return false;
    }
    return true;
  };
  let seed = 7;
  const rnd = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);

  test('a sale bought back later nets to nothing, yet holds back what was sold until it settles', () => {
    const trades = [trade('x', 'c', 'BUY', '0.5', '1000', '0', '0'), trade('b', 'x', 'BUY', '0.5', '1000', '0', '0')];
    const walk = runningDeltas(trades).get('x|eth')!;
    expect(walk).toMatchObject({ net: 0n, lowest: -500_000_000_000_000_000n });
    expect(heldBack(walk)).toBe(500_000_000_000_000_000n);
    // Bought first, then sold: nothing is taken before it arrives, nothing held back.
    expect(heldBack(runningDeltas([...trades].reverse()).get('x|eth')!)).toBe(0n);
  });

  test('held back is exactly what no withdrawal may take for every prefix to settle (brute force over random sequences)', () => {
    for (let round = 0; round < 400; round++) {
      const trades = Array.from({ length: 1 + Math.floor(rnd() * 8) }, (_, i) => randomTrade(rnd, i));
      const walks = runningDeltas(trades);
      for (const walletId of ['x', 'y', 'z']) {
        for (const assetId of ['u', 'c']) {
          const walk = walks.get(`${walletId}|${assetId}`) ?? { net: 0n, lowest: 0n };
          const contract = BigInt(Math.floor(rnd() * 30));
          if (!settles(trades, walletId, assetId, contract)) continue; // underfunded before any withdrawal: not this rule's case
          const ledger = contract + walk.net;
          let most = -1n; // the largest withdrawal after which every trade still settles
          for (let w = 0n; w <= ledger; w++) if (settles(trades, walletId, assetId, contract - w)) most = w;
          expect(heldBack(walk)).toBe(ledger - most);
        }
      }
    }
  });

  test('what the contract must hold for the trades to settle is the least balance that lets them all, and at least what the ledger leaves it (brute force)', () => {
    for (let round = 0; round < 400; round++) {
      const trades = Array.from({ length: 1 + Math.floor(rnd() * 8) }, (_, i) => randomTrade(rnd, i));
      const walk = runningDeltas(trades).get('x|u') ?? { net: 0n, lowest: 0n };
      const ledger = BigInt(Math.floor(rnd() * 30));
      let least = 0n;
      while (!settles(trades, 'x', 'u', least)) least++;
      expect(contractMustHold(ledger, walk)).toBe(least > ledger - walk.net ? least : ledger - walk.net);
    }
  });
});
