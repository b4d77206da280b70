import { markShared, SharedStream } from '../../platform/events/shared-stream';
import type { CommittedChange } from '../orders';
import { marketTradeView } from '../orders';
import type { MarketTrade } from '../orders';
import { KeelError } from '../../platform/errors';
import { stopAll } from './realtime-hub';
import type { RealtimeHub } from './realtime-hub';

/** A feed that listens to one market's changes while it has subscribers. */
export interface MarketFeed<T extends object> {
  start(hub: RealtimeHub): void;
  subscribe(): AsyncIterableIterator<T>;
}

/** The error a market's trades subscriptions end with when this node missed trades (it lost the bus for a while). */
export function tradesInterrupted(symbol: string): KeelError {
  return new KeelError('SERVICE_UNAVAILABLE', `The trades feed of ${symbol} missed trades (this node lost the realtime bus for a while); subscribe again, then read the trades missed with the queries`, { channel: 'trades' });
}

/** The market's trades as committed, as its public tape shows them, each computed once and delivered to every subscriber. */
export class TradeFeed implements MarketFeed<MarketTrade> {
  private readonly stream: SharedStream<MarketTrade>;
  private stopListening: (() => void) | null = null;

  constructor(
    private readonly marketId: string,
    private readonly symbol: string,
    onEmpty: () => void,
  ) {
    this.stream = new SharedStream<MarketTrade>(() => {
      this.stopListening?.();
      onEmpty();
    });
  }

  /** Trades published while this node had lost the bus never reach it: its subscriptions end with an error then (subscribe again, read the trades missed with the queries). */
  start(hub: RealtimeHub): void {
    this.stopListening = stopAll(
      hub.onMarket(this.marketId, (c) => {
        const createdAt = new Date(c.committedAt);
        for (const t of c.trades) {
          this.stream.emit(marketTradeView(t, { id: c.marketId, symbol: this.symbol }, createdAt));
        }
      }),
      hub.onResumed(() => this.stream.fail(tradesInterrupted(this.symbol))),
    );
  }

  subscribe(): AsyncIterableIterator<MarketTrade> {
    return this.stream.subscribe();
  }
}

/**
 * A value recomputed (from PostgreSQL) after the changes that concern it, once per node however
 * many subscribe: at most one computation runs at a time, and changes that arrive meanwhile cause
 * one more. A subscriber gets the latest value at once if it is still `current` (a candle of a past
 * interval is not), then every new one.
 */
export class RecomputedFeed<T extends object> implements MarketFeed<T> {
  private readonly stream: SharedStream<T>;
  private latest: T | null = null;
  private running = false;
  private dirty = false;
  private stopListening: (() => void) | null = null;
  private stopped = false;

  constructor(
    private readonly marketId: string,
    private readonly compute: () => Promise<T | null>,
    private readonly concerns: (change: CommittedChange) => boolean,
    onEmpty: () => void,
    private readonly current: (value: T) => boolean = () => true,
  ) {
    this.stream = new SharedStream<T>(() => {
      this.stopped = true;
      this.stopListening?.();
      onEmpty();
    });
  }

  /** Hearing the bus again after losing it (changes missed) computes the value again. */
  start(hub: RealtimeHub): void {
    this.stopListening = stopAll(
      hub.onMarket(this.marketId, (c) => {
        if (this.concerns(c)) this.refresh();
      }),
      hub.onResumed(() => this.refresh()),
    );
    this.refresh();
  }

  subscribe(): AsyncIterableIterator<T> {
    return this.stream.subscribe(this.latest && this.current(this.latest) ? [this.latest] : []);
  }

  private refresh(): void {
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = true;
    void (async () => {
      do {
        this.dirty = false;
        try {
          const value = await this.compute();
          if (value && !this.stopped) {
            this.latest = markShared(value);
            this.stream.emit(value);
          }
        } catch {
          // PostgreSQL unreachable: the next change tries again
        }
      } while (this.dirty && !this.stopped);
      this.running = false;
    })();
  }
}
