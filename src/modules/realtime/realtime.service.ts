import { KeelError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import type { MarketService } from '../markets';
import type { MarketDataService, Ticker, Candle } from '../market-data';
import { CANDLE_INTERVALS } from '../market-data';
import type { OrderQueries, Fill, MarketTrade, Order } from '../orders';
import type { WalletBalance, WalletBalances } from '../ledger';
import { BookFeed, BookMessage } from './book-feed';
import { assertChannel, ChannelAccess, marketChannel, PrivateChannel } from './channels';
import { MarketFeed, RecomputedFeed, TradeFeed } from './market-feeds';
import { OrganizationFeeds } from './organization-feeds';
import type { RealtimeHub } from './realtime-hub';

/**
 * Realtime feeds for GraphQL subscriptions. Every feed is shared: one per market and channel (one
 * per market, channel and interval for candles; one per organisation for the private channels)
 * on this node, computed once from the committed changes every node publishes through the hub,
 * and delivered to all its subscribers. A feed stops listening when its last subscriber leaves.
 */
export class RealtimeService {
  private readonly marketFeeds = new Map<string, MarketFeed<object>>();
  private readonly organizationFeeds = new Map<string, OrganizationFeeds>();

  constructor(
    private readonly hub: RealtimeHub,
    private readonly markets: MarketService,
    private readonly queries: OrderQueries,
    private readonly marketData: MarketDataService,
    private readonly walletBalances: WalletBalances,
    private readonly logger?: Pick<Logger, 'warn' | 'error'>,
  ) {}

  /** Starts hearing every node's commits now (the order-book role, before its host listens), not with the first subscriber. */
  listen(): Promise<void> {
    return this.hub.ready();
  }

  /** Channel `book:<SYMBOL>`: a SNAPSHOT, then an UPDATE per book sequence number (see BookMessage). */
  async book(access: ChannelAccess, symbol: string): Promise<AsyncIterableIterator<BookMessage>> {
    const market = await this.market(access, 'book', symbol);
    return this.feed(`book:${market.id}`, (onEmpty) => new BookFeed(market.id, market.symbol, () => this.queries.committedBook(market.id), onEmpty)).subscribe();
  }

  /** Channel `trades:<SYMBOL>`: every trade as committed. */
  async trades(access: ChannelAccess, symbol: string): Promise<AsyncIterableIterator<MarketTrade>> {
    const market = await this.market(access, 'trades', symbol);
    return this.feed(`trades:${market.id}`, (onEmpty) => new TradeFeed(market.id, market.symbol, onEmpty)).subscribe();
  }

  /** Channel `ticker:<SYMBOL>`: the ticker now, then again after trades or touch changes. */
  async ticker(access: ChannelAccess, symbol: string): Promise<AsyncIterableIterator<Ticker>> {
    const market = await this.market(access, 'ticker', symbol);
    return this.feed(
      `ticker:${market.id}`,
      (onEmpty) => new RecomputedFeed<Ticker>(market.id, () => this.marketData.ticker(market.symbol, 'record'), (c) => c.trades.length > 0 || c.book !== null, onEmpty),
    ).subscribe();
  }

  /** Channel `candles:<SYMBOL>`: the current interval's candle (none before its first trade), then again after each trade. */
  async candles(access: ChannelAccess, symbol: string, interval: string): Promise<AsyncIterableIterator<Candle>> {
    const market = await this.market(access, 'candles', symbol);
    if (!CANDLE_INTERVALS[interval]) throw KeelError.invalidField('interval', `must be one of ${Object.keys(CANDLE_INTERVALS).join(', ')}`);
    return this.feed(
      `candles:${market.id}:${interval}`,
      (onEmpty) =>
        new RecomputedFeed<Candle>(
          market.id,
          async () => (await this.marketData.candles(market.symbol, interval, 1)).at(-1) ?? null,
          (c) => c.trades.length > 0,
          onEmpty,
          (candle) => candle.time.getTime() + CANDLE_INTERVALS[interval] * 1000 > Date.now(),
        ),
    ).subscribe();
  }

  /** Channel `orders`: the caller's orders, in every state a commit leaves them in; ends with an error if this node missed one (OrganizationFeeds). */
  orders(access: ChannelAccess): AsyncIterableIterator<Order> {
    return this.organization(access, 'orders').orders.subscribe();
  }

  /** Channel `fills`: the caller's fills. */
  fills(access: ChannelAccess): AsyncIterableIterator<Fill> {
    return this.organization(access, 'fills').fills.subscribe();
  }

  /** Channel `balances`: the caller's wallets' trading balances that a commit moved, as they are after it. */
  balances(access: ChannelAccess): AsyncIterableIterator<WalletBalance> {
    return this.organization(access, 'balances').balances.subscribe();
  }

  private async market(access: ChannelAccess, kind: 'book' | 'trades' | 'ticker' | 'candles', symbol: string): Promise<{ id: string; symbol: string }> {
    assertChannel(access, marketChannel(kind, symbol));
    const row = await this.markets.row(symbol);
    return { id: row.id, symbol: row.symbol };
  }

  private feed<T extends object>(key: string, create: (onEmpty: () => void) => MarketFeed<T>): MarketFeed<T> {
    let feed = this.marketFeeds.get(key) as MarketFeed<T> | undefined;
    if (!feed) {
      const created: MarketFeed<T> = create(() => {
        if (this.marketFeeds.get(key) === created) this.marketFeeds.delete(key);
      });
      this.marketFeeds.set(key, created);
      created.start(this.hub);
      feed = created;
    }
    return feed;
  }

  private organization(access: ChannelAccess, channel: PrivateChannel): OrganizationFeeds {
    assertChannel(access, channel);
    const id = access.organizationId;
    let feeds = this.organizationFeeds.get(id);
    if (!feeds) {
      const created = new OrganizationFeeds(id, this.queries, this.walletBalances, () => {
        if (this.organizationFeeds.get(id) === created) this.organizationFeeds.delete(id);
      }, this.logger);
      this.organizationFeeds.set(id, created);
      feeds = created;
    }
    feeds.start(this.hub);
    return feeds;
  }

  /** How many shared feeds this node computes (for tests and the benchmark). */
  feedCount(): number {
    return this.marketFeeds.size + this.organizationFeeds.size;
  }
}
