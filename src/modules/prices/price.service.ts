import { KeelError } from '../../platform/errors';
import { formatScaled, NON_NEGATIVE_DECIMAL_STRING, parseDecimal } from '../../platform/decimal';
import type { BatchPriceSource, PriceSource, TokenPrice } from './price-source';

/** The spec's price batch: 1 to 100 symbols. */
export const PRICE_BATCH_MAX = 100;
/** USD amounts are rendered with this many decimals at most (rounded down). */
const USD_DECIMALS = 8;

/** One row of `POST /v1/assets/prices/tokens`: the spec's Token price plus why a price is missing. */
export interface SymbolPriceView {
  symbol: string;
  /** USD per whole unit; null when no price can be had (never invented). */
  price: string | null;
  lastUpdatedAt: Date | null;
  source: string;
  unavailableReason: string | null;
}

export interface SymbolPriceList {
  data: SymbolPriceView[];
  total: number;
  hasMore: boolean;
}

/** A money decision's USD value and the price it was taken at. */
export interface UsdValuation {
  /** Null when there is no trustworthy price (price.unavailableReason says why). */
  amountUsd: string | null;
  price: TokenPrice;
}

/** Callers choose the keys (symbols): the cache is emptied rather than grown past this. */
const CACHE_MAX_ENTRIES = 10_000;

interface Cached {
  price: TokenPrice;
  expiresAt: number;
}

function isBatch(source: PriceSource): source is BatchPriceSource {
  return typeof (source as Partial<BatchPriceSource>).pricesBySymbol === 'function';
}

/**
 * Token prices in USD from a PriceSource, cached for PRICE_CACHE_SECONDS (a price is at most that
 * stale, plus the source's own age, see asOf): the displayed prices for the API (`prices`,
 * `pricesBySymbol`) and the policy prices for money decisions (`usdValue`, `policyPrice`).
 */
export class PriceService {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly source: PriceSource,
    private readonly cacheSeconds: number,
  ) {}

  async prices(items: { blockchain: string; asset: string }[]): Promise<TokenPrice[]> {
    return Promise.all(items.map((i) => this.cached(`${i.blockchain}\u0000${i.asset}`, () => this.source.price(i.blockchain, i.asset))));
  }

  /**
   * The USD value of `amount` whole units for a money decision: at the policy price (never the
   * displayed last trade), rounded down to 8 decimals; amountUsd null when there is no trustworthy
   * price, with the price's unavailableReason saying why.
   */
  async usdValue(blockchain: string, asset: string, amount: string): Promise<UsdValuation> {
    if (!NON_NEGATIVE_DECIMAL_STRING.test(amount)) throw KeelError.invalidField('amount', 'must be a non-negative decimal string');
    const price = await this.policyPrice(blockchain, asset);
    if (price.priceUsd === null) return { amountUsd: null, price };
    const a = parseDecimal(amount)!;
    const p = parseDecimal(price.priceUsd)!;
    const scale = a.scale + p.scale;
    const product = a.int * p.int;
    return { amountUsd: scale > USD_DECIMALS ? formatScaled(product / 10n ** BigInt(scale - USD_DECIMALS), USD_DECIMALS) : formatScaled(product, scale), price };
  }

  /** The policy price of an asset (see usdValue). */
  async policyPrice(blockchain: string, asset: string): Promise<TokenPrice> {
    return this.cached(`\u0001${blockchain}\u0000${asset}`, () => this.source.policyPrice(blockchain, asset));
  }

  /** The spec's price batch by symbol (1 to 100), in the order asked, duplicates answered once each. */
  async pricesBySymbol(symbols: string[]): Promise<SymbolPriceList> {
    if (symbols.length < 1 || symbols.length > PRICE_BATCH_MAX) {
      throw KeelError.validation([{ field: 'symbols', error: `must have 1 to ${PRICE_BATCH_MAX} elements (got ${symbols.length})` }]);
    }
    symbols.forEach((s, i) => {
      if (!s.trim() || s.length > 32) throw KeelError.validation([{ field: `symbols[${i}]`, error: 'must be a symbol of 1 to 32 characters' }]);
    });
    const keys = symbols.map((s) => s.trim().toUpperCase());
    const now = Date.now();
    // The answer is built from what this call read, not read back from the cache (which may be cleared meanwhile).
    const prices = new Map<string, TokenPrice>();
    for (const k of keys) {
      const cached = this.fresh(`\u0000${k}`, now);
      if (cached) prices.set(k, cached);
    }
    const missing = [...new Set(keys.filter((k) => !prices.has(k)))];
    if (missing.length > 0) {
      const found = isBatch(this.source) ? await this.source.pricesBySymbol(missing) : new Map((await Promise.all(missing.map((k) => this.source.price('', k)))).map((p, i) => [missing[i], p]));
      for (const k of missing) {
        const price = found.get(k) ?? { blockchain: '', asset: k, priceUsd: null, source: 'none', asOf: null, unavailableReason: 'no price' };
        this.remember(`\u0000${k}`, price, now);
        prices.set(k, price);
      }
    }
    const data = keys.map((symbol) => {
      const p = prices.get(symbol)!;
      return { symbol, price: p.priceUsd, lastUpdatedAt: p.asOf, source: p.source, unavailableReason: p.unavailableReason ?? null };
    });
    return { data, total: data.length, hasMore: false };
  }

  private remember(key: string, price: TokenPrice, now: number): void {
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
    this.cache.set(key, { price, expiresAt: now + this.cacheSeconds * 1000 });
  }

  private fresh(key: string, now: number): TokenPrice | undefined {
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > now) return hit.price;
    if (hit) this.cache.delete(key);
    return undefined;
  }

  private async cached(key: string, load: () => Promise<TokenPrice>): Promise<TokenPrice> {
    const hit = this.fresh(key, Date.now());
    if (hit) return hit;
    const price = await load();
    this.remember(key, price, Date.now());
    return price;
  }
}
