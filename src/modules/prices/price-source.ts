/**
 * What a price is and where prices come from. Keel never invents a price: one that cannot be had
 * is a TokenPrice with priceUsd null and the reason.
 */

export interface TokenPrice {
  /** The chain asked about (id or slug), or '' when priced by symbol alone. */
  blockchain: string;
  /** The asset asked about: its symbol (e.g. ETH) or asset id, as the caller gave it. */
  asset: string;
  /** USD per whole unit, a decimal string; null when no price can be had. */
  priceUsd: string | null;
  /** Where the price came from: `reference` (configured), `par` (a USD stablecoin), `orderbook:<MARKET>` (last trade), or `none`. */
  source: string;
  /** When the price was true (the trade's time, or when the reference was read); null when unavailable. */
  asOf: Date | null;
  /** Why there is no price (priceUsd null). */
  unavailableReason?: string;
}

export interface PriceSource {
  /** The displayed price (the token-prices endpoint): may follow the last trade. */
  price(blockchain: string, asset: string): Promise<TokenPrice>;
  /** The price money decisions use (agent policy limits, settlement-rule swaps): one no single organisation can set. */
  policyPrice(blockchain: string, asset: string): Promise<TokenPrice>;
}

/** A source that can price many symbols in one round trip (the default does, with one query). */
export interface BatchPriceSource extends PriceSource {
  pricesBySymbol(symbols: string[]): Promise<Map<string, TokenPrice>>;
}
