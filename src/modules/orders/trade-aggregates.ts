import type { Knex } from 'knex';

/* Aggregates over a market's trades for market data (ticker, candles): the trades table is this module's. */

/** A market's last 24 hours of trades: count, open, high, low, volumes, change (decimals as text), and its last price ever. */
export async function tradeDay(db: Knex | Knex.Transaction, marketId: string): Promise<Record<string, string | null> & { trades: number }> {
  const { rows } = await db.raw(
    `WITH day AS (
       SELECT price, quantity, quote_amount, sequence FROM trades
        WHERE market_id = ? AND created_at >= now() - interval '24 hours'
     ), last AS (
       SELECT price FROM trades WHERE market_id = ? ORDER BY sequence DESC LIMIT 1
     ), agg AS (
       SELECT count(*)::int AS n, (array_agg(price ORDER BY sequence))[1] AS open, max(price) AS high, min(price) AS low,
              coalesce(sum(quantity), 0) AS volume, coalesce(sum(quote_amount), 0) AS quote_volume
         FROM day
     )
     SELECT agg.n AS "trades", (SELECT price FROM last)::text AS "last", agg.open::text AS "open", agg.high::text AS "high", agg.low::text AS "low",
            agg.volume::text AS "volume", agg.quote_volume::text AS "quoteVolume",
            ((SELECT price FROM last) - agg.open)::text AS "change",
            CASE WHEN agg.open > 0 THEN round(((SELECT price FROM last) - agg.open) / agg.open * 100, 4)::text END AS "changePercent"
       FROM agg`,
    [marketId, marketId],
  );
  return rows[0];
}

/** OHLCV (decimals as text) per interval of `seconds` over the last `count` intervals, the current one included, oldest first; intervals without trades are left out. */
export async function tradeCandles(db: Knex | Knex.Transaction, marketId: string, seconds: number, count: number): Promise<Record<string, string>[]> {
  const { rows } = await db.raw(
    `WITH b AS (
       SELECT to_timestamp(floor(extract(epoch FROM created_at) / ?) * ?) AS bucket, price, quantity, sequence
         FROM trades
        WHERE market_id = ? AND created_at >= to_timestamp((floor(extract(epoch FROM now()) / ?) - ? + 1) * ?)
     )
     SELECT bucket AS "time", (array_agg(price ORDER BY sequence))[1]::text AS "open", max(price)::text AS "high", min(price)::text AS "low",
            (array_agg(price ORDER BY sequence DESC))[1]::text AS "close", sum(quantity)::text AS "volume"
       FROM b GROUP BY bucket ORDER BY bucket`,
    [seconds, seconds, marketId, seconds, count, seconds],
  );
  return rows;
}
