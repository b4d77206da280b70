import fc from 'fast-check';
import { MatchingEngine } from '../../../src/engine';
import type { Command, EngineEvent, MarketRules } from '../../../src/engine';
import { ReferenceMatcher } from './reference-matcher';

/** One tick × one lot is 10 base units of the quote asset, so fees round within a tick × lot. */
const RULES: MarketRules = { minNotional: 50, makerFeePpm: 1_000, takerFeePpm: 2_500, notionalUnit: 10n };

/** Random command streams: prices clustered around 100 so orders cross, three owners so self-trades happen. */
const commands = fc
  .array(
    fc.oneof(
      { weight: 7, arbitrary: fc.record({
        kind: fc.constant('place' as const),
        owner: fc.constantFrom('alice', 'bob', 'carol'),
        side: fc.constantFrom('BUY' as const, 'SELL' as const),
        type: fc.constantFrom('LIMIT' as const, 'LIMIT' as const, 'LIMIT' as const, 'MARKET' as const),
        price: fc.integer({ min: 95, max: 105 }),
        quantity: fc.integer({ min: 0, max: 20 }),
        timeInForce: fc.constantFrom('GTC' as const, 'GTC' as const, 'IOC' as const, 'FOK' as const),
        postOnly: fc.constantFrom(false, false, false, true),
      }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('cancel' as const), target: fc.nat(60) }) },
    ),
    { maxLength: 120 },
  )
  .map((raw) =>
    raw.map((c, i): Command => (c.kind === 'cancel' ? { kind: 'cancel', id: `o${c.target}` } : { ...c, id: `o${i}`, postOnly: c.postOnly })),
  );

function run(stream: Command[]) {
  const engine = new MatchingEngine(RULES);
  const events: EngineEvent[][] = stream.map((c) => engine.apply(c));
  return { engine, events };
}

const settings = { numRuns: 300 };

test('the engine emits exactly the reference matcher’s events and leaves the same resting book', () => {
  fc.assert(
    fc.property(commands, (stream) => {
      const reference = new ReferenceMatcher(RULES);
      const { engine, events } = run(stream);
      expect(events).toEqual(stream.map((c) => reference.apply(c)));
      expect(engine.snapshot()).toEqual(reference.snapshot());
    }),
    settings,
  );
});

test('quantity is conserved: filled + cancelled + resting = ordered, for every accepted order', () => {
  fc.assert(
    fc.property(commands, (stream) => {
      const { engine, events } = run(stream);
      const flat = events.flat();
      const ordered = new Map<string, number>();
      const accounted = new Map<string, number>();
      const add = (id: string, q: number) => accounted.set(id, (accounted.get(id) ?? 0) + q);
      stream.forEach((c, i) => {
        if (c.kind === 'place' && events[i][0].type === 'accepted') ordered.set(c.id, c.quantity);
      });
      for (const e of flat) {
        if (e.type === 'trade') {
          add(e.makerOrderId, e.quantity);
          add(e.takerOrderId, e.quantity);
        }
        if (e.type === 'cancelled') add(e.orderId, e.remaining);
      }
      for (const o of engine.snapshot()) add(o.id, o.remaining);
      for (const [id, q] of ordered) expect(accounted.get(id) ?? 0).toBe(q);
    }),
    settings,
  );
});

test('the book is never crossed at rest', () => {
  fc.assert(
    fc.property(commands, (stream) => {
      const engine = new MatchingEngine(RULES);
      for (const c of stream) {
        engine.apply(c);
        const bid = engine.bestBid();
        const ask = engine.bestAsk();
        if (bid !== null && ask !== null) expect(bid).toBeLessThan(ask);
      }
    }),
    settings,
  );
});

test('FOK is all or nothing; IOC and MARKET never rest; postOnly never takes', () => {
  fc.assert(
    fc.property(commands, (stream) => {
      const { events } = run(stream);
      stream.forEach((c, i) => {
        if (c.kind !== 'place') return;
        const own = events[i];
        const traded = own.filter((e) => e.type === 'trade').reduce((s, e) => s + (e.type === 'trade' ? e.quantity : 0), 0);
        if (c.timeInForce === 'FOK' && own[0].type === 'accepted') expect([0, c.quantity]).toContain(traded);
        if (c.timeInForce !== 'GTC' || c.type === 'MARKET') expect(own.some((e) => e.type === 'rested')).toBe(false);
        if (c.postOnly) expect(traded).toBe(0);
      });
    }),
    settings,
  );
});

test('sequence numbers rise by exactly one per event', () => {
  fc.assert(
    fc.property(commands, (stream) => {
      const { events } = run(stream);
      expect(events.flat().map((e) => e.sequence)).toEqual(events.flat().map((_, i) => i + 1));
    }),
    settings,
  );
});

test('a book restored from its snapshot behaves exactly like the original', () => {
  fc.assert(
    fc.property(commands, commands, (before, after) => {
      const original = run(before).engine;
      const restored = new MatchingEngine(RULES, original.sequence);
      restored.restore(original.snapshot());
      expect(restored.snapshot()).toEqual(original.snapshot());
      const renamed = after.map((c) => ({ ...c, id: `n-${c.id}` }) as Command);
      expect(renamed.map((c) => restored.apply(c))).toEqual(renamed.map((c) => original.apply(c)));
    }),
    { numRuns: 150 },
  );
});
