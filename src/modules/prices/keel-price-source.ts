import type { Knex } from 'knex';
import { Ids } from '../../platform/ids';
import { formatScaled, normalizeDecimal, parseDecimal } from '../../platform/decimal';
import { assetRows, assetSymbol } from '../chains';
import { marketRows } from '../markets';
import { tradeRows } from '../orders';
import type { BatchPriceSource, TokenPrice } from './price-source';
import type { ReferencePrices } from './reference-prices';
import { ObservedTrade, policyPrice, PolicyPriceRules } from './policy-price';

/** At most this many of a symbol's most recent trades in the window feed its policy price. */
const POLICY_TRADES_MAX = 5_000;

/** USD per unit of the quote times units of quote per base: exact, trailing zeros dropped. */
function multiply(a: string, b: string): string {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  if (!x || !y) throw new Error(`not a decimal: ${!x ? a : b}`);
  return formatScaled(x.int * y.int, x.scale + y.scale);
}

interface LastTrade {
  base: string;
  market: string;
  quote: string;
  price: string;
  created_at: Date;
}

/**
 * Keel's default prices, from what it knows itself. The displayed price (`price`, the token-prices
 * endpoint):
 * 1. a reference price configured for the symbol (PRICE_REFERENCES) pins it;
 * 2. a USD stablecoin (PRICE_STABLECOINS) is at par;
 * 3. otherwise the last trade, at most PRICE_TRADE_MAX_AGE_SECONDS old, of any Keel order-book
 *    market whose base asset has the symbol and whose quote asset is a USD stablecoin (times that
 *    stablecoin's own price);
 * 4. otherwise no price (null, with the reason).
 * The policy price (`policyPrice`, what money decisions use) is a stablecoin's par or reference,
 * else the trust rule of `policy-price.ts` over the window's trades with their organisations.
 * An asset is priced by its symbol: the same token on two chains has one price.
 */
export class KeelPriceSource implements BatchPriceSource {
  constructor(
    private readonly db: Knex,
    private readonly references: ReferencePrices,
    private readonly tradeMaxAgeSeconds: number,
    private readonly policyRules: PolicyPriceRules,
  ) {}

  async policyPrice(blockchain: string, asset: string): Promise<TokenPrice> {
    const symbol = await this.symbolOf(asset);
    if (symbol === null) return { blockchain, asset, priceUsd: null, source: 'none', asOf: null, unavailableReason: 'unknown asset' };
    const key = symbol.toUpperCase();
    if (this.references.isStablecoin(key)) {
      const par = this.references.lookup(key)!;
      return { blockchain, asset, priceUsd: par.priceUsd, source: par.source, asOf: new Date() };
    }
    const trades = await this.windowTrades(key);
    const decided = policyPrice(key, trades, this.references.configured(key), this.policyRules, new Date());
    return decided.priceUsd === null
      ? { blockchain, asset, priceUsd: null, source: 'none', asOf: null, unavailableReason: decided.reason }
      : { blockchain, asset, priceUsd: decided.priceUsd, source: decided.source, asOf: decided.asOf };
  }

  /** The symbol's trades in the policy window on markets quoted in a USD stablecoin, in USD, with both sides' organisations. */
  private async windowTrades(symbol: string): Promise<ObservedTrade[]> {
    const quotes = this.references.usdQuotes();
    if (quotes.length === 0) return [];
    // One statement over the owners' rows: trades and their orders (orders), markets, assets (chains).
    const rows = (await this.db.raw(
      `SELECT m.symbol AS market, upper(qa.symbol) AS quote, t.price::text AS price, t.quantity::text AS quantity,
              t.maker_organization_id AS maker_org, t.taker_organization_id AS taker_org, t.created_at
         FROM ? t
         JOIN ? m ON m.id = t.market_id
         JOIN ? ba ON ba.id = m.base_asset_id
         JOIN ? qa ON qa.id = m.quote_asset_id
        WHERE upper(ba.symbol) = ? AND upper(qa.symbol) = ANY(?::text[])
          AND t.created_at > now() - make_interval(secs => ?)
        ORDER BY t.created_at DESC
        LIMIT ?`,
      [tradeRows(this.db, true), marketRows(this.db), assetRows(this.db), assetRows(this.db), symbol, quotes, this.policyRules.windowSeconds, POLICY_TRADES_MAX],
    )) as { rows: { market: string; quote: string; price: string; quantity: string; maker_org: string; taker_org: string; created_at: Date }[] };
    return rows.rows.map((r) => ({
      market: r.market,
      priceUsd: multiply(normalizeDecimal(r.price), this.references.lookup(r.quote)!.priceUsd),
      quantity: normalizeDecimal(r.quantity),
      makerOrganizationId: r.maker_org,
      takerOrganizationId: r.taker_org,
      at: r.created_at,
    }));
  }

  async price(blockchain: string, asset: string): Promise<TokenPrice> {
    const symbol = await this.symbolOf(asset);
    if (symbol === null) return { blockchain, asset, priceUsd: null, source: 'none', asOf: null, unavailableReason: 'unknown asset' };
    const found = (await this.pricesBySymbol([symbol])).get(symbol.toUpperCase());
    return { ...(found ?? unavailable(symbol, 'no price')), blockchain, asset };
  }

  /** Prices keyed by upper-cased symbol, one query for all those that need the order book. */
  async pricesBySymbol(symbols: string[]): Promise<Map<string, TokenPrice>> {
    const out = new Map<string, TokenPrice>();
    const fromTrades: string[] = [];
    const now = new Date();
    for (const raw of symbols) {
      const key = raw.toUpperCase();
      if (out.has(key)) continue;
      const reference = this.references.lookup(key);
      if (reference) out.set(key, { blockchain: '', asset: raw, priceUsd: reference.priceUsd, source: reference.source, asOf: now });
      else fromTrades.push(key);
    }
    if (fromTrades.length === 0) return out;
    const trades = await this.lastTrades(fromTrades);
    for (const key of fromTrades) {
      const trade = trades.get(key);
      const quote = trade ? this.references.lookup(trade.quote) : undefined;
      out.set(
        key,
        trade && quote
          ? { blockchain: '', asset: key, priceUsd: multiply(normalizeDecimal(trade.price), quote.priceUsd), source: `orderbook:${trade.market}`, asOf: trade.created_at }
          : unavailable(key, `no reference price and no trade in the last ${this.tradeMaxAgeSeconds}s on a market quoted in a USD stablecoin (${this.references.usdQuotes().join(', ')})`),
      );
    }
    return out;
  }

  private async lastTrades(symbols: string[]): Promise<Map<string, LastTrade>> {
    const quotes = this.references.usdQuotes();
    if (quotes.length === 0) return new Map();
    // One statement over the owners' rows: trades (orders), markets, assets (chains).
    const rows = (await this.db.raw(
      `SELECT DISTINCT ON (upper(ba.symbol)) upper(ba.symbol) AS base, m.symbol AS market, upper(qa.symbol) AS quote, t.price::text AS price, t.created_at
         FROM ? t
         JOIN ? m ON m.id = t.market_id
         JOIN ? ba ON ba.id = m.base_asset_id
         JOIN ? qa ON qa.id = m.quote_asset_id
        WHERE upper(ba.symbol) = ANY(?::text[]) AND upper(qa.symbol) = ANY(?::text[])
          AND t.created_at > now() - make_interval(secs => ?)
        ORDER BY upper(ba.symbol), t.created_at DESC, t.sequence DESC`,
      [tradeRows(this.db), marketRows(this.db), assetRows(this.db), assetRows(this.db), symbols, quotes, this.tradeMaxAgeSeconds],
    )) as { rows: LastTrade[] };
    return new Map(rows.rows.map((r) => [r.base, r]));
  }

  /** An asset id resolves to its symbol (null when unknown); anything else is taken as a symbol. */
  private async symbolOf(asset: string): Promise<string | null> {
    if (!Ids.isUuid(asset)) return asset;
    return assetSymbol(this.db, asset);
  }
}

function unavailable(symbol: string, reason: string): TokenPrice {
  return { blockchain: '', asset: symbol, priceUsd: null, source: 'none', asOf: null, unavailableReason: reason };
}
