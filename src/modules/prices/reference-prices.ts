import { NON_NEGATIVE_DECIMAL_STRING, normalizeDecimal } from '../../platform/decimal';

/**
 * Prices the operator states: PRICE_REFERENCES (a JSON object of symbol → USD decimal string)
 * and the USD stablecoins of PRICE_STABLECOINS, which are at par (1) unless a reference says otherwise.
 */
export class ReferencePrices {
  private readonly references = new Map<string, string>();
  private readonly stablecoins: Set<string>;

  constructor(referencesJson: string, stablecoins: string) {
    for (const [symbol, price] of Object.entries(parseReferences(referencesJson))) this.references.set(symbol.toUpperCase(), price);
    this.stablecoins = new Set(stablecoins.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean));
  }

  /** The configured reference, else 1 for a stablecoin, else undefined. */
  lookup(symbol: string): { priceUsd: string; source: 'reference' | 'par' } | undefined {
    const key = symbol.toUpperCase();
    const reference = this.references.get(key);
    if (reference !== undefined) return { priceUsd: reference, source: 'reference' };
    if (this.stablecoins.has(key)) return { priceUsd: '1', source: 'par' };
    return undefined;
  }

  /** The operator's configured reference alone (no par), for the trust rule of policy prices. */
  configured(symbol: string): { priceUsd: string; source: 'reference' } | undefined {
    const reference = this.references.get(symbol.toUpperCase());
    return reference === undefined ? undefined : { priceUsd: reference, source: 'reference' };
  }

  isStablecoin(symbol: string): boolean {
    return this.stablecoins.has(symbol.toUpperCase());
  }

  /** The USD stablecoins an order-book market may be quoted in to price its base asset. */
  usdQuotes(): string[] {
    return [...this.stablecoins];
  }
}

/** Validates PRICE_REFERENCES: `{"ETH": "3120.5", "WBTC": "97000"}`; throws with what is wrong. */
export function parseReferences(json: string): Record<string, string> {
  if (!json.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Error('PRICE_REFERENCES: not JSON (expected an object of symbol to USD decimal string)');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('PRICE_REFERENCES: expected an object of symbol to USD decimal string');
  const out: Record<string, string> = {};
  for (const [symbol, value] of Object.entries(parsed as Record<string, unknown>)) {
    const text = typeof value === 'number' ? String(value) : value;
    if (typeof text !== 'string' || !NON_NEGATIVE_DECIMAL_STRING.test(text)) throw new Error(`PRICE_REFERENCES: ${symbol}: expected a positive decimal string`);
    // A reference of 0 would value the asset at nothing: every USD limit of agent payments would pass.
    if (normalizeDecimal(text) === '0') throw new Error(`PRICE_REFERENCES: ${symbol}: expected a positive decimal string (0 values the asset at nothing)`);
    out[symbol] = normalizeDecimal(text);
  }
  return out;
}
