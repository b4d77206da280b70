import { admitPlacement, MatchingEngine, PlacementTerms } from '../../../src/engine';

const RULES = { minNotional: 100, makerFeePpm: 1_000, takerFeePpm: 2_500, notionalUnit: 10n };
const UNITS = { lotUnits: 1_000n };
const whole = (n: bigint) => ({ positive: true, whole: n });
const limitBuy: PlacementTerms = { id: 'o1', owner: 'w', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', postOnly: false, quantity: whole(10n), price: whole(20n) };
const marketBuy: PlacementTerms = { ...limitBuy, type: 'MARKET', price: undefined };

describe('the market rules a placement must meet before it reaches the book', () => {
  it('admits a LIMIT order as the engine command, locking notional plus the higher fee (BUY) or its lots (SELL) in base units', () => {
    const engine = new MatchingEngine(RULES);
    expect(admitPlacement(engine, UNITS, limitBuy)).toEqual({
      command: { kind: 'place', id: 'o1', owner: 'w', side: 'BUY', type: 'LIMIT', price: 20, quantity: 10, timeInForce: 'GTC', postOnly: false },
      lock: 200n * 10n + 5n,
    });
    expect(admitPlacement(engine, UNITS, { ...limitBuy, side: 'SELL' })).toMatchObject({ lock: 10n * 1_000n });
  });

  it('quotes a MARKET BUY on the asks as they stand', () => {
    const engine = new MatchingEngine(RULES);
    expect(admitPlacement(engine, UNITS, marketBuy)).toMatchObject({ command: { type: 'MARKET', price: undefined }, lock: 0n });
    engine.apply({ kind: 'place', id: 'a', owner: 's', side: 'SELL', type: 'LIMIT', price: 30, quantity: 4, timeInForce: 'GTC' });
    expect(admitPlacement(engine, UNITS, marketBuy)).toMatchObject({ lock: 120n * 10n + 3n });
  });

  it.each<[string, Partial<PlacementTerms>, string]>([
    ['quantity zero or not a decimal', { quantity: { positive: false, whole: null } }, 'QUANTITY_NOT_POSITIVE'],
    ['quantity not a whole number of lots', { quantity: { positive: true, whole: null } }, 'QUANTITY_OFF_LOT'],
    ['more lots than a safe integer', { quantity: whole(2n ** 53n) }, 'QUANTITY_TOO_LARGE'],
    ['a LIMIT order without a price', { price: undefined }, 'PRICE_REQUIRED'],
    ['a price of zero', { price: { positive: false, whole: null } }, 'PRICE_NOT_POSITIVE'],
    ['a price not a whole number of ticks', { price: { positive: true, whole: null } }, 'PRICE_OFF_TICK'],
    ['ticks × lots past a safe integer', { price: whole(2n ** 50n), quantity: whole(16n) }, 'NOTIONAL_TOO_LARGE'],
    ['a MARKET order with a price', { type: 'MARKET' }, 'PRICE_NOT_ALLOWED'],
    ['a post-only MARKET order', { type: 'MARKET', price: undefined, postOnly: true }, 'POST_ONLY_NOT_LIMIT'],
    ['ticks × lots under the minimum notional', { price: whole(9n) }, 'BELOW_MIN_NOTIONAL'],
  ])('refuses %s', (_, change, reason) => {
    expect(admitPlacement(new MatchingEngine(RULES), UNITS, { ...limitBuy, ...change })).toBe(reason);
  });

  it('reports the first broken rule: quantity before price, shape before the minimum', () => {
    const engine = new MatchingEngine(RULES);
    expect(admitPlacement(engine, UNITS, { ...limitBuy, quantity: { positive: true, whole: null }, price: { positive: false, whole: null } })).toBe('QUANTITY_OFF_LOT');
    expect(admitPlacement(engine, UNITS, { ...limitBuy, quantity: whole(1n), price: { positive: true, whole: null } })).toBe('PRICE_OFF_TICK');
  });

  it('leaves the book and the sequence as they were', () => {
    const engine = new MatchingEngine(RULES);
    admitPlacement(engine, UNITS, limitBuy);
    expect(engine.sequence).toBe(0);
    expect(engine.snapshot()).toEqual([]);
  });
});
