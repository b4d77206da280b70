import fc from 'fast-check';
import { MatchingEngine } from '../../../src/engine';
import type { TradingRules } from '../../../src/modules/markets/market.service';
import { OrderSide, OrderStatus } from '../../../src/modules/orders/order.domain';
import { accountFills, LockShortfall } from '../../../src/modules/orders/fill-accounting';
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
  engine: { minNotional: 0, makerFeePpm: 1_000, takerFeePpm: 2_000, notionalUnit: 10n },
  sequence: 0,
  rulesVersion: 1,
} as TradingRules;

const ETH = 10n ** 18n;
const USDC = 10n ** 6n;

/**
 * A book whose commands are accounted one by one, the resting orders carried over as the runtime
 * does; a change of the market's fees reloads the engine from the book as it rests.
 */
function market(rules: TradingRules = RULES) {
  let engine = new MatchingEngine(rules.engine);
  const resting = new Map<string, Working>();
  let trades = 0;
  const account = (command: Matched) => {
    const accounted = accountFills(rules, resting, [command], () => `trade-${++trades}`);
    for (const w of accounted.orders) {
      if (isResting(w)) resting.set(w.id, { ...w, isNew: false });
      else resting.delete(w.id);
    }
    return { ...accounted, order: (orderId: string) => accounted.orders.find((o) => o.id === orderId)! };
  };
  return {
    resting,
    /**
     * Places a LIMIT order at `ticks` (a MARKET order without them) locking what the service would
     * (a BUY: engine.buyLock; a SELL: the base) unless `lock` says otherwise.
     */
    place(id: string, wallet: string, side: OrderSide, ticks: number | undefined, lots: number, lock?: bigint) {
      lock ??= side === OrderSide.SELL ? BigInt(lots) * rules.lotUnits : engine.buyLock(lots, ticks);
      const events = engine.apply({ kind: 'place', id, owner: wallet, side, type: ticks === undefined ? 'MARKET' : 'LIMIT', price: ticks, quantity: lots, timeInForce: 'GTC' });
      const rejected = events[0].type === 'rejected' ? events[0].reason : undefined;
      const lockAssetId = side === OrderSide.BUY ? 'USDC' : 'ETH';
      const priceTicks = ticks === undefined ? null : BigInt(ticks);
      const working = newWorking({ id, organizationId: `org-of-${wallet}`, walletId: wallet, side, priceTicks, lots: BigInt(lots), lockAssetId, lock, rejected: rejected !== undefined });
      return { ...account({ events, order: { working, row: {}, lock: rejected ? 0n : lock }, rejected }), lock };
    },
    cancel(id: string) {
      return account({ events: engine.apply({ kind: 'cancel', id }), order: null });
    },
    /** The operator changes the market's fees while orders rest. */
    setFees(makerFeePpm: number, takerFeePpm: number) {
      const reloaded = new MatchingEngine({ ...rules.engine, makerFeePpm, takerFeePpm }, engine.sequence);
      reloaded.restore(engine.snapshot());
      engine = reloaded;
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

  it('rounds each fee up to a whole base unit of the quote asset in the venue’s favour, never to a whole tick × lot', () => {
    const book = market();
    book.place('sell', 'seller', OrderSide.SELL, 1, 1); // 0.01 × 0.001: 10 base units, fees ceil(0.01) and ceil(0.02) = 1
    const { trades, moves } = book.place('buy', 'buyer', OrderSide.BUY, 1, 1);
    expect(trades[0]).toMatchObject({ quoteAmount: '0.00001', makerFee: '0.000001', takerFee: '0.000001' });
    expect(moves.find((m) => m.kind === 'fee')!.available).toBe(2n);
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

  it('refuses a fill that a lock cannot pay for with LockShortfall, an INTERNAL_ERROR that names no order to the caller', () => {
    const book = market();
    book.place('buy', 'buyer', OrderSide.BUY, 200_000, 1_000, 1_000n * USDC); // half of what 1 ETH at 2000 costs
    let refusal: unknown;
    try {
      book.place('sell', 'seller', OrderSide.SELL, 200_000, 1_000);
    } catch (e) {
      refusal = e;
    }
    expect(refusal).toBeInstanceOf(LockShortfall);
    expect(refusal).toMatchObject({ code: 'INTERNAL_ERROR', status: 500, orderId: 'buy', locked: 1_000n * USDC, needed: 2_000n * USDC });
    expect((refusal as Error).message).not.toContain('buy');
  });
});

describe('a BUY’s fees never take what the rest of the order needs', () => {
  /** Both fees 0.1%: a one-lot fill at 2000.05 (2_000_050 base units of USDC) pays 2000.05 rounded up to 2001 base units. */
  const EVEN = { ...RULES, engine: { ...RULES.engine, makerFeePpm: 1_000, takerFeePpm: 1_000 } } as TradingRules;
  const LOT_COST = 200_005n * RULES.notionalUnit;

  it('a resting BUY of 0.3 ETH at 2000.05 filled by 300 one-lot SELLs is filled whole: the fees rounded up fill by fill stop at its fee lock, and the last fill pays what is left of it', () => {
    const book = market(EVEN);
    const { lock } = book.place('bid', 'buyer', OrderSide.BUY, 200_005, 300);
    expect(lock).toBe(300n * LOT_COST + 600_015n); // the fee on the whole, 0.1% of 600_015_000 base units
    const fills = Array.from({ length: 300 }, (_, i) => book.place(`ask-${i}`, `seller-${i}`, OrderSide.SELL, 200_005, 1));
    const buyerFees = fills.map((f) => f.trades[0].makerFee);
    expect(buyerFees.slice(0, 299)).toEqual(Array(299).fill('0.002001'));
    expect(buyerFees.slice(299)).toEqual(['0.001716']); // 600_015 − 299 × 2_001
    expect(fills[299].order('bid')).toMatchObject({ status: OrderStatus.FILLED, filledLots: 300n, lockedAmount: 0n, feesPaid: lock - 300n * LOT_COST });
    expect(fills.flatMap((f) => f.moves).filter((m) => m.kind === 'unlock')).toEqual([]); // it paid exactly what it locked
  });

  it('a taker BUY of 300 lots sweeping 300 one-lot asks in one command is filled whole and pays exactly what it locked', () => {
    const book = market(EVEN);
    for (let i = 0; i < 300; i++) book.place(`ask-${i}`, `seller-${i}`, OrderSide.SELL, 200_005, 1);
    const { lock, trades, moves, order } = book.place('sweep', 'buyer', OrderSide.BUY, 200_005, 300);
    const buyerFees = trades.map((t) => t.takerFee);
    expect(buyerFees.slice(0, 299)).toEqual(Array(299).fill('0.002001'));
    expect(buyerFees.slice(299)).toEqual(['0.001716']);
    expect(trades.map((t) => t.makerFee)).toEqual(Array(300).fill('0.002001')); // the sellers' fees come out of their proceeds, whole
    expect(order('sweep')).toMatchObject({ status: OrderStatus.FILLED, lockedAmount: 0n, feesPaid: lock - 300n * LOT_COST });
    expect(moves.filter((m) => m.kind === 'unlock')).toEqual([]);
  });

  it('a BUY already short of its rest (fees taken from it before the cap) fills free while its lock pays each fill, and only a fill it cannot pay is refused', () => {
    const book = market(EVEN);
    book.place('short', 'buyer', OrderSide.BUY, 200_005, 2, 2n * LOT_COST - 1n); // one base unit short of its notional
    const first = book.place('ask-0', 'seller-0', OrderSide.SELL, 200_005, 1);
    expect(first.trades[0].makerFee).toBe('0');
    expect(first.order('short')).toMatchObject({ status: OrderStatus.PARTIALLY_FILLED, lockedAmount: LOT_COST - 1n });
    expect(() => book.place('ask-1', 'seller-1', OrderSide.SELL, 200_005, 1)).toThrow(LockShortfall);
  });

  it('a fee raised while a BUY rests is charged only from what it locked beyond its notional: a BUY locked for no fee fills free', () => {
    const book = market({ ...RULES, engine: { ...RULES.engine, makerFeePpm: 0, takerFeePpm: 0 } } as TradingRules);
    const { lock } = book.place('bid', 'buyer', OrderSide.BUY, 200_000, 2);
    expect(lock).toBe(4n * USDC);
    book.setFees(1_000, 2_000);
    const first = book.place('ask-1', 'seller', OrderSide.SELL, 200_000, 1);
    const second = book.place('ask-2', 'seller', OrderSide.SELL, undefined, 1);
    expect([first.trades[0], second.trades[0]]).toEqual([expect.objectContaining({ makerFee: '0', takerFee: '0.004' }), expect.objectContaining({ makerFee: '0', takerFee: '0.004' })]);
    expect(first.order('bid')).toMatchObject({ status: OrderStatus.PARTIALLY_FILLED, lockedAmount: 2n * USDC });
    expect(second.order('bid')).toMatchObject({ status: OrderStatus.FILLED, lockedAmount: 0n, feesPaid: 0n });
  });

  /** Random streams around a price of 1 USDC (small notionals, so per-fill rounding matters), three wallets, fees changing while orders rest. */
  const streams = fc.array(
    fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          kind: fc.constant('place' as const),
          wallet: fc.constantFrom('alice', 'bob', 'carol'),
          side: fc.constantFrom(OrderSide.BUY, OrderSide.SELL),
          market: fc.constantFrom(false, false, false, true),
          ticks: fc.integer({ min: 95, max: 105 }),
          lots: fc.integer({ min: 1, max: 30 }),
        }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), target: fc.nat(80) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('fees' as const), maker: fc.constantFrom(0, 1_000, 2_500, 7_777, 100_000), taker: fc.constantFrom(0, 1_000, 2_500, 7_777, 100_000) }) },
    ),
    { maxLength: 80 },
  );

  it('over any stream: a BUY pays (cost + fees) no more than it locked and keeps locked what its rest needs at its limit price; an order that ends releases exactly what it did not pay; every asset is conserved', () => {
    fc.assert(
      fc.property(streams, (stream) => {
        const book = market();
        const locks = new Map<string, bigint>();
        const released = new Map<string, bigint>();
        const net = new Map<string, bigint>();
        stream.forEach((step, i) => {
          if (step.kind === 'fees') return book.setFees(step.maker, step.taker);
          let accounted;
          if (step.kind === 'cancel') {
            if (!book.resting.has(`o${step.target}`)) return; // the service cancels only what the engine holds
            accounted = book.cancel(`o${step.target}`);
          } else {
            accounted = book.place(`o${i}`, step.wallet, step.side, step.market ? undefined : step.ticks, step.lots);
            locks.set(`o${i}`, accounted.lock);
          }
          for (const m of accounted.moves) {
            net.set(m.assetId, (net.get(m.assetId) ?? 0n) + m.available + m.locked);
            if (m.kind === 'unlock') released.set(m.reference, (released.get(m.reference) ?? 0n) + m.available);
          }
          for (const o of accounted.orders) {
            if (o.status === OrderStatus.REJECTED) continue;
            const lock = locks.get(o.id)!;
            const paid = o.side === OrderSide.BUY ? o.filledNotional * RULES.notionalUnit + o.feesPaid : o.filledLots * RULES.lotUnits;
            expect(paid).toBeLessThanOrEqual(lock);
            expect(o.lockedAmount).toBe(lock - paid - (released.get(`order:${o.id}`) ?? 0n));
            if (isResting(o)) {
              if (o.side === OrderSide.BUY) expect(o.lockedAmount).toBeGreaterThanOrEqual(o.remainingLots * o.priceTicks! * RULES.notionalUnit);
            } else expect(o.lockedAmount).toBe(0n);
          }
          for (const [asset, sum] of net) expect([asset, sum]).toEqual([asset, 0n]);
        });
      }),
      { numRuns: 200 },
    );
  });
});
