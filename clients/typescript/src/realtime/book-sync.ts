import type { ProClient } from '../clients';
import type { components } from '../generated/pro';
import { unwrap } from '../errors';
import type { KeelRealtime, Sink } from './realtime';

export type BookLevel = components['schemas']['BookLevel'];

/** A message of the `orderBook` subscription (channel book:<SYMBOL>). */
export interface BookMessage {
  market: string;
  kind: 'SNAPSHOT' | 'UPDATE';
  /** The market's book sequence after this message; grows by exactly one per message. */
  sequence: string;
  bids: BookLevel[];
  asks: BookLevel[];
  timestamp: string;
}

export interface Book {
  market: string;
  /** Best (highest) first. */
  bids: BookLevel[];
  /** Best (lowest) first. */
  asks: BookLevel[];
  /** The book sequence of the last message applied. */
  sequence: string;
}

/** Where book messages come from: a subscription of `symbol`'s book, returning its unsubscribe. */
export type BookSource = (symbol: string, sink: Sink<BookMessage>) => () => void;

const BOOK_SUBSCRIPTION = `subscription Book($symbol: String!) {
  orderBook(symbol: $symbol) { market kind sequence timestamp bids { price quantity orders } asks { price quantity orders } }
}`;

/** The book channel of a KeelRealtime connection. */
export function realtimeBookSource(realtime: KeelRealtime): BookSource {
  return (symbol, sink) =>
    realtime.subscribe<{ orderBook: BookMessage }>(BOOK_SUBSCRIPTION, { symbol }, { next: (data) => sink.next(data.orderBook), error: (e) => sink.error(e), complete: () => sink.complete?.() });
}

export interface ResyncEvent {
  /** The sequence the book waited for and the one that came instead. */
  expected: string;
  received: string;
}

export interface BookSyncOptions {
  symbol: string;
  source: BookSource;
  /** Reads the REST snapshot (GET /v1/orderbook/markets/{symbol}/book) after a gap. */
  pro: ProClient;
  /** Levels per side of the REST snapshot (default and maximum 500). */
  levels?: number;
  onChange?(book: Book): void;
  onResync?(event: ResyncEvent): void;
  onError?(error: unknown): void;
}

type Side = Map<string, BookLevel>;

/**
 * A market's order book kept current from the realtime channel. Each UPDATE carries the new
 * quantity of every level it changed, and must follow the last message's sequence by exactly one.
 * When one is missing (a gap), the book is read again over REST and the updates received since
 * the gap are applied on top, in order: as they carry levels' new values (not differences), the
 * result is the book after the last of them, whichever of them the snapshot already included.
 */
export class BookSync {
  private readonly bids: Side = new Map();
  private readonly asks: Side = new Map();
  private sequence: bigint | undefined;
  private market = '';
  /** Updates held while a REST snapshot is read; undefined when none is being read. */
  private held: BookMessage[] | undefined;
  private unsubscribe?: () => void;
  private settled: Promise<void> = Promise.resolve();
  private resyncs = 0;

  constructor(private readonly options: BookSyncOptions) {}

  start(): void {
    this.unsubscribe = this.options.source(this.options.symbol, {
      next: (message) => this.receive(message),
      error: (error) => this.options.onError?.(error),
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** The book as last applied; undefined until the first SNAPSHOT. */
  book(): Book | undefined {
    if (this.sequence === undefined) return undefined;
    const sorted = (side: Side, dir: 1 | -1) => [...side.values()].sort((a, b) => dir * compareDecimal(a.price, b.price));
    return { market: this.market, bids: sorted(this.bids, -1), asks: sorted(this.asks, 1), sequence: String(this.sequence) };
  }

  /** Resolves once no REST resync is under way. */
  idle(): Promise<void> {
    return this.settled;
  }

  private receive(message: BookMessage): void {
    this.market = message.market;
    if (message.kind === 'SNAPSHOT') {
      // The channel's own snapshot (on subscribing, or when the host reloaded the book) replaces everything.
      this.replace(message);
      this.sequence = BigInt(message.sequence);
      this.applyHeld();
      return this.changed();
    }
    if (this.held) return void this.held.push(message);
    if (this.sequence === undefined) return;
    const sequence = BigInt(message.sequence);
    if (sequence <= this.sequence) return;
    if (sequence !== this.sequence + 1n) return this.resync(message);
    this.apply(message);
    this.changed();
  }

  private resync(first: BookMessage): void {
    this.options.onResync?.({ expected: String(this.sequence! + 1n), received: first.sequence });
    this.held = [first];
    const attempt = ++this.resyncs;
    const { pro, symbol, levels = 500 } = this.options;
    this.settled = unwrap(pro.GET('/v1/orderbook/markets/{symbol}/book', { params: { path: { symbol }, query: { levels } } }))
      .then(({ data }) => {
        if (attempt !== this.resyncs || !this.held) return; // a SNAPSHOT came first
        this.replace(data);
        const [head] = this.held;
        this.sequence = BigInt(head.sequence) - 1n;
        this.applyHeld();
        this.changed();
      })
      .catch((error) => {
        // The book stays as it was; the next update is a gap again and retries the read.
        if (attempt === this.resyncs) this.held = undefined;
        this.options.onError?.(error);
      });
  }

  /** Applies the held updates in order; another gap among them starts another resync. */
  private applyHeld(): void {
    const held = (this.held ?? []).sort((a, b) => compareBig(a.sequence, b.sequence));
    this.held = undefined;
    for (const [i, message] of held.entries()) {
      const sequence = BigInt(message.sequence);
      if (sequence <= this.sequence!) continue;
      if (sequence !== this.sequence! + 1n) {
        this.resync(message);
        this.held!.push(...held.slice(i + 1));
        return;
      }
      this.apply(message);
    }
  }

  private replace(book: { bids: BookLevel[]; asks: BookLevel[] }): void {
    this.bids.clear();
    this.asks.clear();
    for (const level of book.bids) this.bids.set(level.price, level);
    for (const level of book.asks) this.asks.set(level.price, level);
  }

  private apply(message: BookMessage): void {
    for (const [side, levels] of [[this.bids, message.bids], [this.asks, message.asks]] as const) {
      for (const level of levels) {
        if (Number(level.quantity) === 0) side.delete(level.price);
        else side.set(level.price, level);
      }
    }
    this.sequence = BigInt(message.sequence);
  }

  private changed(): void {
    if (this.options.onChange) this.options.onChange(this.book()!);
  }
}

const compareBig = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);
const compareDecimal = (a: string, b: string) => Number(a) - Number(b);
