import { RecomputedFeed, TradeFeed } from '../../../src/modules/realtime/market-feeds';
import { fakeHub } from './fake-hub';
import type { CommittedChange } from '../../../src/modules/orders/committed-change';
import type { KeelError } from '../../../src/platform/errors';
import { RealtimeService } from '../../../src/modules/realtime/realtime.service';
import type { Candle, MarketDataService } from '../../../src/modules/market-data';
import type { MarketService } from '../../../src/modules/markets';
import type { OrderQueries } from '../../../src/modules/orders';
import type { WalletBalances } from '../../../src/modules/ledger';


const traded = (sequence: number): CommittedChange =>
  ({
    marketId: 'm',
    symbol: 'ETH-USDC',
    committedAt: 0,
    book: null,
    trades: [{ id: `t${sequence}`, sequence, price: '2000', quantity: '1', makerFee: '0', takerFee: '0', takerSide: 'BUY' }],
    orders: [],
    balances: [],
  }) as unknown as CommittedChange;

const tick = () => new Promise((r) => setImmediate(r));

test('a trades subscription ends with SERVICE_UNAVAILABLE when this node hears the bus again after losing it: trades published meanwhile never reached it', async () => {
  const h = fakeHub();
  const feed = new TradeFeed('m', 'ETH-USDC', () => undefined);
  feed.start(h.hub);
  const it = feed.subscribe();
  h.send(traded(1));
  expect((await it.next()).value).toMatchObject({ id: 't1', market: 'ETH-USDC' });

  h.resume();

  const ended = await it.next().then(
    () => null,
    (error: KeelError) => error,
  );
  expect(ended).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { channel: 'trades' } });
  expect(ended?.message).toMatch(/subscribe again/);
});

test('a recomputed value (the ticker) is computed again when this node hears the bus again, with no change since', async () => {
  const h = fakeHub();
  let computed = 0;
  const feed = new RecomputedFeed('m', async () => ({ computed: ++computed }), () => true, () => undefined);
  feed.start(h.hub);
  const it = feed.subscribe();
  await tick();
  expect((await it.next()).value).toEqual({ computed: 1 });

  h.resume();
  await tick();

  expect((await it.next()).value).toEqual({ computed: 2 });
});

test('a new candles subscriber gets the current interval\'s candle first, never a past interval\'s: none until the interval has a trade', async () => {
  const h = fakeHub();
  const at = (time: string) => jest.spyOn(Date, 'now').mockReturnValue(Date.parse(time));
  const candle = (time: string, close: string) => ({ time: new Date(time), open: close, high: close, low: close, close, volume: '1' });
  let current: Candle | null = candle('2026-01-01T10:00:00Z', '2000'); // the last trade: 10:00:30
  const marketData = { candles: async () => (current ? [current] : []) } as unknown as MarketDataService;
  const markets = { row: async () => ({ id: 'm', symbol: 'ETH-USDC' }) } as unknown as MarketService;
  const service = new RealtimeService(h.hub, markets, {} as OrderQueries, marketData, {} as WalletBalances);
  const access = { organizationId: 'o', mayUseChannel: () => true };
  try {
    at('2026-01-01T10:00:40Z');
    const early = await service.candles(access, 'ETH-USDC', '1m');
    expect((await early.next()).value).toMatchObject({ close: '2000' });

    at('2026-01-01T10:05:00Z');
    current = null; // no trade yet in the 10:05 interval
    const late = await service.candles(access, 'ETH-USDC', '1m');
    current = candle('2026-01-01T10:05:00Z', '2010');
    h.send(traded(2));
    expect((await late.next()).value).toMatchObject({ time: new Date('2026-01-01T10:05:00Z'), close: '2010' });
  } finally {
    jest.restoreAllMocks();
  }
});
