import { markShared, SharedStream } from '../../platform/events/shared-stream';
import type { CommittedChange, BookLevel } from '../orders';
import { stopAll } from './realtime-hub';
import type { RealtimeHub } from './realtime-hub';
import { BookMessageKind } from './realtime.domain';

/**
 * A message of the order-book feed. SNAPSHOT: the whole book after book message `sequence`
 * (replace what you hold). UPDATE: the levels book message `sequence` changed, each with its new
 * quantity and order count (quantity "0": the level is gone); it follows `sequence - 1` exactly.
 */
export interface BookMessage {
  market: string;
  kind: BookMessageKind;
  sequence: string;
  bids: BookLevel[];
  asks: BookLevel[];
  timestamp: Date;
}

/** The market's committed book and its book sequence, as PostgreSQL holds them. */
export interface CommittedBook {
  market: string;
  sequence: string;
  bids: BookLevel[];
  asks: BookLevel[];
}

const RELOAD_RETRY_MS = 500;
/** Changes kept while the book (re)loads; past this they are dropped, and the gap they leave makes the feed reload again. */
const MAX_PENDING = 10_000;

const byPrice = (dir: 1 | -1) => (a: BookLevel, b: BookLevel) => dir * (Number(a.price) - Number(b.price));

/**
 * One market's book as this node's subscribers see it, computed once for all of them: a copy of
 * the levels, loaded from PostgreSQL and moved by each committed change in book-sequence order.
 * A change that skips a number (a message lost on the bus, a failover) makes the feed reload the
 * book and send every subscriber a new SNAPSHOT.
 */
export class BookFeed {
  private readonly stream: SharedStream<BookMessage>;
  private readonly bids = new Map<string, BookLevel>();
  private readonly asks = new Map<string, BookLevel>();
  /** The book sequence the levels are at; -1 while (re)loading. */
  private sequence = -1;
  private loading = false;
  /** The bus was heard again while loading: the book being loaded may miss changes published meanwhile, so load it again. */
  private reloadAgain = false;
  private pending: CommittedChange[] = [];
  private snapshotCache: BookMessage | null = null;
  private stopListening: (() => void) | null = null;
  private stopped = false;

  constructor(
    private readonly marketId: string,
    private readonly symbol: string,
    private readonly load: () => Promise<CommittedBook>,
    onEmpty: () => void,
  ) {
    this.stream = new SharedStream<BookMessage>(() => {
      this.stop();
      onEmpty();
    });
  }

  /** Listens to the market's changes from now on, and loads the book; hearing the bus again after losing it (changes missed) loads it again, once more if a load was under way. */
  start(hub: Pick<RealtimeHub, 'onMarket' | 'onResumed'>): void {
    this.stopListening = stopAll(
      hub.onMarket(this.marketId, (c) => this.onChange(c)),
      hub.onResumed(() => this.resync()),
    );
    this.resync();
  }

  /** A SNAPSHOT first (now, or once the book is loaded), then every UPDATE. */
  subscribe(): AsyncIterableIterator<BookMessage> {
    return this.stream.subscribe(this.sequence >= 0 ? [this.snapshot()] : []);
  }

  private stop(): void {
    this.stopped = true;
    this.stopListening?.();
  }

  private onChange(change: CommittedChange): void {
    if (!change.book) return;
    if (this.sequence >= 0) this.apply(change);
    else if (this.pending.length < MAX_PENDING) this.pending.push(change);
  }

  /** Applies a change in sequence (true), or starts a resync when one is missing (false). */
  private apply(change: CommittedChange): boolean {
    const book = change.book!;
    const seq = Number(book.sequence);
    if (seq <= this.sequence) return true;
    if (seq !== this.sequence + 1) {
      this.pending.push(change);
      this.resync();
      return false;
    }
    for (const l of book.bids) setLevel(this.bids, l);
    for (const l of book.asks) setLevel(this.asks, l);
    this.sequence = seq;
    this.snapshotCache = null;
    this.stream.emit({ market: this.symbol, kind: BookMessageKind.UPDATE, sequence: book.sequence, bids: [...book.bids].sort(byPrice(-1)), asks: [...book.asks].sort(byPrice(1)), timestamp: new Date(change.committedAt) });
    return true;
  }

  private resync(): void {
    if (this.loading) {
      this.reloadAgain = true;
      return;
    }
    this.loading = true;
    this.sequence = -1;
    void this.reload();
  }

  private async reload(): Promise<void> {
    let book: CommittedBook | undefined;
    do {
      this.reloadAgain = false;
      try {
        book = await this.load();
      } catch {
        book = undefined;
        await new Promise((r) => setTimeout(r, RELOAD_RETRY_MS));
      }
    } while (!this.stopped && (!book || this.reloadAgain));
    this.loading = false;
    if (!book || this.stopped) return;
    this.bids.clear();
    this.asks.clear();
    for (const l of book.bids) this.bids.set(l.price, l);
    for (const l of book.asks) this.asks.set(l.price, l);
    this.sequence = Number(book.sequence);
    this.snapshotCache = null;
    this.stream.emit(this.snapshot());
    const queued = this.pending.sort((a, b) => Number(a.book!.sequence) - Number(b.book!.sequence));
    this.pending = [];
    for (let i = 0; i < queued.length; i++) {
      if (!this.apply(queued[i])) {
        this.pending.push(...queued.slice(i + 1));
        return;
      }
    }
  }

  /** The whole book now, shared by every subscriber that joins before the next change. */
  private snapshot(): BookMessage {
    this.snapshotCache ??= markShared({
      market: this.symbol,
      kind: BookMessageKind.SNAPSHOT,
      sequence: String(this.sequence),
      bids: [...this.bids.values()].sort(byPrice(-1)),
      asks: [...this.asks.values()].sort(byPrice(1)),
      timestamp: new Date(),
    });
    return this.snapshotCache;
  }
}

function setLevel(side: Map<string, BookLevel>, level: BookLevel): void {
  if (level.orders === 0) side.delete(level.price);
  else side.set(level.price, level);
}
