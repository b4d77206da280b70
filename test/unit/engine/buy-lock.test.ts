import { MatchingEngine } from '../../../src/engine';

const RULES = { minNotional: 100, makerFeePpm: 1_000, takerFeePpm: 2_500 };

describe('the engine quotes what a BUY locks and says why it would reject', () => {
  it('a LIMIT BUY locks its notional plus the fee at the higher rate, rounded up', () => {
    const engine = new MatchingEngine(RULES);
    expect(engine.buyLock(1_000, 200_000)).toBe(200_000_000n + 500_000n);
    expect(engine.buyLock(1, 100)).toBe(100n + 1n);
  });

  it('a MARKET BUY locks the cost of the asks it would take, the taker fee rounded up per resting order', () => {
    const engine = new MatchingEngine(RULES);
    engine.apply({ kind: 'place', id: 'a1', owner: 's', side: 'SELL', type: 'LIMIT', price: 100, quantity: 3, timeInForce: 'GTC' });
    engine.apply({ kind: 'place', id: 'a2', owner: 't', side: 'SELL', type: 'LIMIT', price: 100, quantity: 2, timeInForce: 'GTC' });
    engine.apply({ kind: 'place', id: 'a3', owner: 's', side: 'SELL', type: 'LIMIT', price: 110, quantity: 10, timeInForce: 'GTC' });
    // 5 lots at 100 (two orders: fee ceil(500 × 0.25%) = 2, +1 for the second order's rounding), then 2 at 110 (fee 1).
    expect(engine.buyLock(7)).toBe(500n + 2n + 1n + 220n + 1n);
    expect(engine.buyLock(100)).toBe(500n + 3n + 1_100n + 3n);
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
