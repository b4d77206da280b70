import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { normalizeDecimal } from '../../platform/decimal';
import type { MarketService } from '../markets';
import { tradeCandles, tradeDay, type OrderQueries } from '../orders';

/** Candle intervals and their length in seconds. Buckets are aligned to the Unix epoch (UTC). */
export const CANDLE_INTERVALS: Record<string, number> = { '1m': 60, '5m': 300, '15m': 900, '1h': 3600, '4h': 14_400, '1d': 86_400 };
export const MAX_CANDLES = 500;

/** Last price, touch and 24-hour statistics of a market. */
export interface Ticker {
  market: string;
  last: string | null;
  bestBid: string | null;
  bestAsk: string | null;
  open24h: string | null;
  high24h: string | null;
  low24h: string | null;
  volume24h: string;
  quoteVolume24h: string;
  change24h: string | null;
  changePercent24h: string | null;
  trades24h: number;
  timestamp: Date;
}

/** OHLCV of one interval. */
export interface Candle {
  time: Date;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

const dec = (v: string | null): string | null => (v === null ? null : normalizeDecimal(v));

/** Ticker and candles: aggregates over the market's trades (orders' face), plus the touch from the live engine. */
export class MarketDataService {
  constructor(
    private readonly db: Knex,
    private readonly markets: MarketService,
    private readonly orders: OrderQueries,
  ) {}

  /**
   * `touch`: 'engine' reads best bid and ask from this node's engine (in turn with the market's
   * commands); 'record' from the committed open orders in PostgreSQL (any node, leader or not).
   */
  async ticker(symbol: string, touchFrom: 'engine' | 'record' = 'engine'): Promise<Ticker> {
    const market = await this.markets.row(symbol);
    const r = await tradeDay(this.db, market.id);
    const touch = touchFrom === 'engine' ? await this.orders.touch(market.id) : await this.orders.committedTouch(market.id);
    return {
      market: market.symbol,
      last: dec(r.last),
      bestBid: touch.bestBid,
      bestAsk: touch.bestAsk,
      open24h: dec(r.open),
      high24h: dec(r.high),
      low24h: dec(r.low),
      volume24h: dec(r.volume)!,
      quoteVolume24h: dec(r.quoteVolume)!,
      change24h: dec(r.change),
      changePercent24h: dec(r.changePercent),
      trades24h: r.trades,
      timestamp: new Date(),
    };
  }

  /**
   * OHLCV per interval over the last `count` intervals (the current one included), oldest first.
   * Intervals without trades are left out.
   */
  async candles(symbol: string, interval: string, count: number): Promise<Candle[]> {
    const seconds = CANDLE_INTERVALS[interval];
    if (!seconds) throw KeelError.invalidField('interval', `must be one of ${Object.keys(CANDLE_INTERVALS).join(', ')}`);
    if (!Number.isInteger(count) || count < 1 || count > MAX_CANDLES) throw KeelError.invalidField('count', `must be between 1 and ${MAX_CANDLES}`);
    const market = await this.markets.row(symbol);
    const rows = await tradeCandles(this.db, market.id, seconds, count);
    return rows.map((r) => ({
      time: new Date(r.time),
      open: normalizeDecimal(r.open),
      high: normalizeDecimal(r.high),
      low: normalizeDecimal(r.low),
      close: normalizeDecimal(r.close),
      volume: normalizeDecimal(r.volume),
    }));
  }
}
