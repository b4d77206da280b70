import { RecomputedFeed, TradeFeed } from '../../../src/modules/realtime/market-feeds';
import { fakeHub } from './fake-hub';
import type { CommittedChange } from '../../../src/modules/orders/committed-change';
import type { KeelError } from '../../../src/platform/errors';


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
