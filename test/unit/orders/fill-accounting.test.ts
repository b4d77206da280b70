import { MatchingEngine } from '../../../src/engine';
import type { TradingRules } from '../../../src/modules/markets/market.service';
import { OrderSide, OrderStatus } from '../../../src/modules/orders/order.domain';
import { accountFills } from '../../../src/modules/orders/fill-accounting';
import { isResting, Matched, newWorking, Working } from '../../../src/modules/orders/working-order';

/**
 * ETH-USDC: tick 0.01 USDC, lot 0.001 ETH; ETH has 18 decimals and USDC 6, so a lot is 10^15 base
 * units and one tick × lot (the engine's notional unit) is 10 USDC base units. Maker fee 0.1%, taker 0.2%.
 */
const RULES = {
  market: { id: 'market-1', symbol: 'ETH-USDC', baseAssetId: 'ETH', quoteAssetId: 'USDC' },
  baseDecimals: 18,
  quoteDecimals: 6,
  tick: { int: 1n, scale: 2 },
  lot: { int: 1n, scale: 3 },
  lotUnits: 10n ** 15n,
  notionalUnit: 10n,
  engine: { minNotional: 0, makerFeePpm: 1_000, takerFeePpm: 2_000 },
  sequence: 0,
  rulesVersion: 1,
} as TradingRules;

const ETH = 10n ** 18n;
const USDC = 10n ** 6n;

/** A book whose placements are accounted one by one, the resting orders carried over as the runtime does. */
function market() {
  const engine = new MatchingEngine(RULES.engine);
  const resting = new Map<string, Working>();
  let trades = 0;
  return {
    resting,
    /** Places a LIMIT order locking what the service would (a BUY: engine.buyLock; a SELL: the base) unless `lock` says otherwise. */
    place(id: string, wallet: string, side: OrderSide, ticks: number, lots: number, lock?: bigint) {
      lock ??= side === OrderSide.SELL ? BigInt(lots) * RULES.lotUnits : engine.buyLock(lots, ticks) * RULES.notionalUnit;
      const events = engine.apply({ kind: 'place', id, owner: wallet, side, type: 'LIMIT', price: ticks, quantity: lots, timeInForce: 'GTC' });
      const rejected = events[0].type === 'rejected' ? events[0].reason : undefined;
      const lockAssetId = side === OrderSide.BUY ? 'USDC' : 'ETH';
      const working = newWorking({ id, organizationId: `org-of-${wallet}`, walletId: wallet, side, lots: BigInt(lots), lockAssetId, lock, rejected: rejected !== undefined });
      const command: Matched = { events, order: { working, row: {}, lock: rejected ? 0n : lock }, rejected };
      const accounted = accountFills(RULES, resting, [command], () => `trade-${++trades}`);
      for (const w of accounted.orders) {
        if (isResting(w)) resting.set(w.id, { ...w, isNew: false });
        else resting.delete(w.id);
      }
      return { ...accounted, order: (orderId: string) => accounted.orders.find((o) => o.id === orderId)! };
    },
  };
}

describe('fill accounting: engine events to order states and ledger moves', () => {
  it('a resting order locks what it may spend and moves nothing else', () => {
    const book = market();
    const { orders, trades, moves } = book.place('sell', 'seller', OrderSide.SELL, 200_000, 1_000);
    expect(trades).toEqual([]);
    expect(moves).toEqual([{ organizationId: 'org-of-seller', walletId: 'seller', assetId: 'ETH', kind: 'lock', available: -ETH, locked: ETH, reference: 'order:sell' }]);
    expect(orders).toEqual([expect.objectContaining({ id: 'sell', status: OrderStatus.OPEN, lockedAmount: ETH, remainingLots: 1_000n, restSequence: 2 })]);
  });

  it('a full fill makes five ledger moves, charges both fees in the quote asset and releases what the buyer locked beyond its cost', () => {
    const book = market();
    book.place('sell', 'seller', OrderSide.SELL, 200_000, 1_000); // 1 ETH at 2000
    const { orders, trades, moves } = book.place('buy', 'buyer', OrderSide.BUY, 201_000, 1_000); // up to 2010
    const buyLock = 2_014_020_000n; // (2010 + 0.2%) USDC
    const cost = 2_000n * USDC;
    const makerFee = 2n * USDC; // 0.1% of 2000
    const takerFee = 4n * USDC; // 0.2% of 2000
    expect(moves).toEqual([
      { organizationId: 'org-of-buyer', walletId: 'buyer', assetId: 'USDC', kind: 'lock', available: -buyLock, locked: buyLock, reference: 'order:buy' },
      { organizationId: 'org-of-buyer', walletId: 'buyer', assetId: 'USDC', kind: 'fill', available: 0n, locked: -(cost + takerFee), reference: 'trade:trade-1' },
      { organizationId: 'org-of-buyer', walletId: 'buyer', assetId: 'ETH', kind: 'fill', available: ETH, locked: 0n, reference: 'trade:trade-1' },
      { organizationId: 'org-of-seller', walletId: 'seller', assetId: 'ETH', kind: 'fill', available: 0n, locked: -ETH, reference: 'trade:trade-1' },
      { organizationId: 'org-of-seller', walletId: 'seller', assetId: 'USDC', kind: 'fill', available: cost - makerFee, locked: 0n, reference: 'trade:trade-1' },
      { organizationId: null, walletId: null, assetId: 'USDC', kind: 'fee', available: makerFee + takerFee, locked: 0n, reference: 'trade:trade-1' },
      { organizationId: 'org-of-buyer', walletId: 'buyer', assetId: 'USDC', kind: 'unlock', available: buyLock - cost - takerFee, locked: -(buyLock - cost - takerFee), reference: 'order:buy' },
    ]);
    expect(trades).toEqual([
      expect.objectContaining({ id: 'trade-1', marketId: 'market-1', makerOrderId: 'sell', takerOrderId: 'buy', takerSide: 'BUY', price: '2000', quantity: '1', quoteAmount: '2000', makerFee: '2', takerFee: '4' }),
    ]);
    expect(book.resting.size).toBe(0);
    expect(orders.find((o) => o.id === 'sell')).toMatchObject({ status: OrderStatus.FILLED, remainingLots: 0n, filledLots: 1_000n, lockedAmount: 0n, feesPaid: makerFee });
    expect(orders.find((o) => o.id === 'buy')).toMatchObject({ status: OrderStatus.FILLED, remainingLots: 0n, filledNotional: 200_000_000n, lockedAmount: 0n, feesPaid: takerFee });
  });

  it('a partial fill leaves the maker resting PARTIALLY_FILLED with the rest of its lock', () => {
    const book = market();
    book.place('sell', 'seller', OrderSide.SELL, 200_000, 2_000);
    const { order, moves } = book.place('buy', 'buyer', OrderSide.BUY, 200_000, 500);
    expect(order('sell')).toMatchObject({ status: OrderStatus.PARTIALLY_FILLED, remainingLots: 1_500n, filledLots: 500n, lockedAmount: (3n * ETH) / 2n });
    expect(order('buy')).toMatchObject({ status: OrderStatus.FILLED, lockedAmount: 0n });
    expect(moves.filter((m) => m.kind === 'unlock')).toEqual([]); // the buyer locked exactly cost + taker fee
    expect(book.resting.get('sell')).toMatchObject({ remainingLots: 1_500n });
  });

  it('a taker filled in part rests the remainder PARTIALLY_FILLED, still locking for it', () => {
    const book = market();
    book.place('sell', 'seller', OrderSide.SELL, 200_000, 1_000);
    const { order } = book.place('buy', 'buyer', OrderSide.BUY, 200_000, 3_000);
    expect(order('buy')).toMatchObject({ status: OrderStatus.PARTIALLY_FILLED, remainingLots: 2_000n, filledLots: 1_000n, restSequence: expect.any(Number) });
    expect(order('buy').lockedAmount).toBe(6_012_000_000n - 2_004_000_000n);
    expect(book.resting.has('buy')).toBe(true);
  });

  it('rounds each fee up to a whole tick × lot in the venue’s favour', () => {
    const book = market();
    book.place('sell', 'seller', OrderSide.SELL, 1, 1); // 0.01 × 0.001: notional 1, fees ceil(0.001) and ceil(0.002) = 1
    const { trades, moves } = book.place('buy', 'buyer', OrderSide.BUY, 1, 1);
    expect(trades[0]).toMatchObject({ quoteAmount: '0.00001', makerFee: '0.00001', takerFee: '0.00001' });
    expect(moves.find((m) => m.kind === 'fee')!.available).toBe(20n);
  });

  it('charges a resting buyer no more fee than is left of its lock', () => {
    const book = market();
    book.place('buy', 'buyer', OrderSide.BUY, 200_000, 1_000, 2_000n * USDC + 1n); // locked for a fee of one base unit only
    const { order, moves } = book.place('sell', 'seller', OrderSide.SELL, 200_000, 1_000);
    expect(order('buy')).toMatchObject({ status: OrderStatus.FILLED, feesPaid: 1n, lockedAmount: 0n });
    expect(moves.find((m) => m.kind === 'fee')!.available).toBe(1n + 4n * USDC);
  });

  it('self-trade prevention cancels the taker’s rest and releases its lock; the resting order is untouched', () => {
    const book = market();
    book.place('sell', 'both', OrderSide.SELL, 200_000, 1_000);
    const { orders, trades, moves } = book.place('buy', 'both', OrderSide.BUY, 200_000, 1_000);
    expect(trades).toEqual([]);
    expect(orders.map((o) => o.id)).toEqual(['buy']);
    expect(orders[0]).toMatchObject({ status: OrderStatus.CANCELLED, statusReason: 'SELF_TRADE', lockedAmount: 0n });
    expect(moves.map((m) => [m.kind, m.available + m.locked])).toEqual([
      ['lock', 0n],
      ['unlock', 0n],
    ]);
    expect(book.resting.get('sell')).toMatchObject({ remainingLots: 1_000n, lockedAmount: ETH });
  });

  it('a rejected order is recorded REJECTED with the engine’s reason and moves nothing', () => {
    const book = market();
    const { orders, moves } = book.place('bad', 'buyer', OrderSide.BUY, 0, 1);
    expect(orders).toEqual([expect.objectContaining({ id: 'bad', status: OrderStatus.REJECTED, statusReason: 'INVALID_PRICE', lockedAmount: 0n })]);
    expect(moves).toEqual([]);
  });

  it('never changes the resting orders it is given', () => {
    const book = market();
    book.place('sell', 'seller', OrderSide.SELL, 200_000, 2_000);
    const given = book.resting.get('sell')!;
    const copy = { ...given };
    book.place('buy', 'buyer', OrderSide.BUY, 200_000, 500);
    expect(given).toEqual(copy);
    expect(book.resting.get('sell')).toMatchObject({ remainingLots: 1_500n });
  });
});
