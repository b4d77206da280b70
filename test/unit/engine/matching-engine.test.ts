import { MatchingEngine } from '../../../src/engine';
import type { Command, EngineEvent, PlaceOrder } from '../../../src/engine';

const rules = { minNotional: 100, makerFeePpm: 1_000, takerFeePpm: 2_000, notionalUnit: 1n };
let n = 0;
const limit = (owner: string, side: 'BUY' | 'SELL', price: number, quantity: number, extra: Partial<PlaceOrder> = {}): Command => ({
  kind: 'place', id: `o${++n}`, owner, side, type: 'LIMIT', price, quantity, timeInForce: 'GTC', ...extra,
});
const types = (events: EngineEvent[]) => events.map((e) => e.type);

describe('the matching engine', () => {
  test('a crossing order trades at the resting price, oldest first at a price', () => {
    const book = new MatchingEngine(rules);
    const first = limit('a', 'SELL', 101, 5);
    const second = limit('b', 'SELL', 101, 5);
    book.apply(first);
    book.apply(second);
    const events = book.apply(limit('c', 'BUY', 103, 7));
    const trades = events.filter((e) => e.type === 'trade');
    expect(trades).toMatchObject([
      { makerOrderId: first.id, price: 101, quantity: 5 },
      { makerOrderId: second.id, price: 101, quantity: 2 },
    ]);
    expect(book.order(second.id)?.remaining).toBe(3);
  });

  test('fees are charged per side in parts per million of the notional, rounded up to a base unit of the quote', () => {
    const book = new MatchingEngine(rules);
    book.apply(limit('a', 'SELL', 333, 1));
    const [trade] = book.apply(limit('b', 'BUY', 333, 1)).filter((e) => e.type === 'trade');
    expect(trade).toMatchObject({ makerFee: 1n, takerFee: 1n }); // 0.333 and 0.666 round up to 1
  });

  test('fees are exact in base units of the quote however large one tick × one lot is', () => {
    // Tick 1 USDC, lot 1 ETH: one tick × one lot is 10^6 USDC base units.
    const book = new MatchingEngine({ minNotional: 0, makerFeePpm: 1_000, takerFeePpm: 2_000, notionalUnit: 1_000_000n });
    book.apply(limit('a', 'SELL', 1, 1));
    const [trade] = book.apply(limit('b', 'BUY', 1, 1)).filter((e) => e.type === 'trade');
    expect(trade).toMatchObject({ makerFee: 1_000n, takerFee: 2_000n }); // 0.1% and 0.2% of 1 USDC
  });

  test('what a GTC order cannot fill rests; IOC cancels it; MARKET never rests', () => {
    const book = new MatchingEngine(rules);
    book.apply(limit('a', 'SELL', 100, 2));
    expect(types(book.apply(limit('b', 'BUY', 100, 5)))).toEqual(['accepted', 'trade', 'filled', 'rested']);
    book.apply(limit('a', 'SELL', 100, 10));
    expect(book.apply(limit('c', 'BUY', 99, 5, { timeInForce: 'IOC' })).at(-1)).toMatchObject({ type: 'cancelled', reason: 'IOC_REMAINDER', remaining: 5 });
    expect(book.apply({ kind: 'place', id: 'm1', owner: 'c', side: 'BUY', type: 'MARKET', quantity: 50, timeInForce: 'GTC' }).at(-1)).toMatchObject({
      type: 'cancelled', reason: 'NO_LIQUIDITY', remaining: 43,
    });
  });

  test('FOK fills completely or does nothing', () => {
    const book = new MatchingEngine(rules);
    book.apply(limit('a', 'SELL', 100, 3));
    expect(types(book.apply(limit('b', 'BUY', 100, 4, { timeInForce: 'FOK' })))).toEqual(['accepted', 'cancelled']);
    expect(book.order('o1')?.remaining ?? book.snapshot()[0].remaining).toBe(3);
    expect(types(book.apply(limit('b', 'BUY', 100, 3, { timeInForce: 'FOK' })))).toEqual(['accepted', 'trade', 'filled', 'filled']);
  });

  test('postOnly is rejected when it would take, and rests otherwise', () => {
    const book = new MatchingEngine(rules);
    book.apply(limit('a', 'SELL', 100, 3));
    expect(book.apply(limit('b', 'BUY', 100, 3, { postOnly: true }))).toMatchObject([{ type: 'rejected', reason: 'POST_ONLY_WOULD_TAKE' }]);
    expect(types(book.apply(limit('b', 'BUY', 99, 3, { postOnly: true })))).toEqual(['accepted', 'rested']);
  });

  test('self-trade prevention cancels the incoming order and leaves the resting one', () => {
    const book = new MatchingEngine(rules);
    book.apply(limit('x', 'SELL', 100, 2));
    const own = limit('a', 'SELL', 101, 5);
    book.apply(own);
    const events = book.apply(limit('a', 'BUY', 101, 6));
    expect(events.filter((e) => e.type === 'trade')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'cancelled', reason: 'SELF_TRADE', remaining: 4 });
    expect(book.order(own.id)?.remaining).toBe(5);
  });

  test('invalid orders are rejected with a reason and change nothing', () => {
    const book = new MatchingEngine(rules);
    expect(book.apply(limit('a', 'BUY', 0, 5))[0]).toMatchObject({ reason: 'INVALID_PRICE' });
    expect(book.apply(limit('a', 'BUY', 10.5, 5))[0]).toMatchObject({ reason: 'INVALID_PRICE' });
    expect(book.apply(limit('a', 'BUY', 10, 0))[0]).toMatchObject({ reason: 'INVALID_QUANTITY' });
    expect(book.apply(limit('a', 'BUY', 10, 5))[0]).toMatchObject({ reason: 'BELOW_MIN_NOTIONAL' });
    expect(book.apply({ kind: 'cancel', id: 'nope' })[0]).toMatchObject({ reason: 'ORDER_NOT_FOUND' });
    expect(book.snapshot()).toEqual([]);
  });

  test('depth aggregates each price level, best first', () => {
    const book = new MatchingEngine(rules);
    for (const c of [limit('a', 'BUY', 99, 2), limit('b', 'BUY', 99, 3), limit('a', 'BUY', 98, 2), limit('c', 'SELL', 101, 4)]) book.apply(c);
    expect(book.depth(1)).toEqual({ bids: [{ price: 99, quantity: 5, orders: 2 }], asks: [{ price: 101, quantity: 4, orders: 1 }] });
    expect(book.depth(10).bids).toHaveLength(2);
  });
});
