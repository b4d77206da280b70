import { MatchingEngine } from '../../../src/engine';

// One tick × one lot is 10 base units of the quote asset; locks are in those base units.
const RULES = { minNotional: 100, makerFeePpm: 1_000, takerFeePpm: 2_500, notionalUnit: 10n };

describe('the engine quotes what a BUY locks and says why it would reject', () => {
  it('a LIMIT BUY locks its notional plus the fee at the higher rate, rounded up to a base unit', () => {
    const engine = new MatchingEngine(RULES);
    expect(engine.buyLock(1_000, 200_000)).toBe(2_000_000_000n + 5_000_000n);
    expect(engine.buyLock(1, 100)).toBe(1_000n + 3n); // 2.5 rounds up to 3, not to a whole tick × lot (10)
  });

  it('a MARKET BUY locks the cost of the asks it would take, the taker fee rounded up per resting order', () => {
    const engine = new MatchingEngine(RULES);
    engine.apply({ kind: 'place', id: 'a1', owner: 's', side: 'SELL', type: 'LIMIT', price: 100, quantity: 3, timeInForce: 'GTC' });
    engine.apply({ kind: 'place', id: 'a2', owner: 't', side: 'SELL', type: 'LIMIT', price: 100, quantity: 2, timeInForce: 'GTC' });
    engine.apply({ kind: 'place', id: 'a3', owner: 's', side: 'SELL', type: 'LIMIT', price: 110, quantity: 10, timeInForce: 'GTC' });
    // 5 lots at 100 (two orders: fee ceil(5000 × 0.25%) = 13, +1 for the second order's rounding), then 2 at 110 (fee ceil(5.5) = 6).
    expect(engine.buyLock(7)).toBe(5_000n + 13n + 1n + 2_200n + 6n);
    expect(engine.buyLock(100)).toBe(5_000n + 13n + 1n + 11_000n + 28n);
    expect(new MatchingEngine(RULES).buyLock(5)).toBe(0n);
  });

  it('check gives the rejection apply would record, without touching the book or the sequence', () => {
    const engine = new MatchingEngine(RULES);
    const small = { kind: 'place', id: 'o', owner: 'w', side: 'BUY', type: 'LIMIT', price: 10, quantity: 5, timeInForce: 'GTC' } as const;
    expect(engine.check(small)).toBe('BELOW_MIN_NOTIONAL');
    expect(engine.check({ ...small, quantity: 10 })).toBeNull();
    expect(engine.sequence).toBe(0);
    expect(engine.apply(small)[0]).toMatchObject({ type: 'rejected', reason: 'BELOW_MIN_NOTIONAL' });
  });
});
