/**
 * The trust rule for policy prices: pure. Given the recent order-book trades of one symbol (each
 * already in USD) and the operator's reference, it decides the USD price that money decisions may
 * use (agent policy limits, settlement-rule swaps), or that there is none and why.
 *
 * 1. Trades whose maker and taker orders belong to the same organisation never count (self-trades).
 * 2. The reference is the operator's (PRICE_REFERENCES) when there is one, otherwise the
 *    volume-weighted median of the remaining trades.
 * 3. Only trades within `maxDeviationBasisPoints` of the reference count; they must come from at
 *    least `minOrganizations` distinct organisations (maker or taker). Then the price is their
 *    volume-weighted median: an organisation moves it only by out-trading everyone else inside the band.
 * 4. Otherwise the operator's reference, if any; otherwise no price (the caller fails closed).
 */
import { formatScaled, parseDecimal, pow10 } from '../../platform/decimal';

export interface PolicyPriceRules {
  /** Distinct organisations the counted trades must come from. */
  minOrganizations: number;
  /** How far a trade may lie from the reference and still count, in basis points. */
  maxDeviationBasisPoints: bigint;
  /** The window the trades were read over (for the reasons only). */
  windowSeconds: number;
}

export interface ObservedTrade {
  market: string;
  /** USD per whole unit of the base asset (the trade price times its quote's USD price). */
  priceUsd: string;
  /** Whole units of the base asset. */
  quantity: string;
  makerOrganizationId: string;
  takerOrganizationId: string;
  at: Date;
}

export type PolicyPrice =
  | { priceUsd: string; source: string; asOf: Date; organizations: number }
  | { priceUsd: null; reason: string };

/** Prices and quantities are compared at this many decimals. */
const SCALE = 18;

const scaled = (text: string): bigint => {
  const d = parseDecimal(text);
  if (!d) throw new Error(`not a decimal: ${text}`);
  return (d.int * pow10(SCALE)) / pow10(d.scale);
};

interface Weighted {
  price: bigint;
  quantity: bigint;
  trade: ObservedTrade;
}

/** The price at which half the volume has traded below or at it (the lower median on a tie). */
function weightedMedian(trades: Weighted[]): bigint {
  const sorted = [...trades].sort((a, b) => (a.price < b.price ? -1 : a.price > b.price ? 1 : 0));
  const total = sorted.reduce((s, t) => s + t.quantity, 0n);
  let seen = 0n;
  for (const t of sorted) {
    seen += t.quantity;
    if (seen * 2n >= total) return t.price;
  }
  return sorted[sorted.length - 1].price;
}

/** |price - reference| ≤ reference × bp / 10,000. */
export function withinDeviation(price: bigint, reference: bigint, maxDeviationBasisPoints: bigint): boolean {
  const gap = price > reference ? price - reference : reference - price;
  return gap * 10_000n <= reference * maxDeviationBasisPoints;
}

export function policyPrice(symbol: string, trades: ObservedTrade[], reference: { priceUsd: string; source: string } | undefined, rules: PolicyPriceRules, now: Date): PolicyPrice {
  const fallback = (why: string): PolicyPrice =>
    reference ? { priceUsd: reference.priceUsd, source: reference.source, asOf: now, organizations: 0 } : { priceUsd: null, reason: `no trustworthy USD price for ${symbol}: ${why}` };

  const crossOrg: Weighted[] = trades
    .filter((t) => t.makerOrganizationId !== t.takerOrganizationId)
    .map((t) => ({ price: scaled(t.priceUsd), quantity: scaled(t.quantity), trade: t }))
    .filter((t) => t.quantity > 0n && t.price > 0n);
  const window = `in the last ${rules.windowSeconds}s`;
  if (crossOrg.length === 0) {
    return fallback(
      trades.length > 0
        ? `every trade of ${symbol} ${window} was between wallets of one organisation, and self-trades never set a price`
        : `no trade of ${symbol} ${window} on a market quoted in a USD stablecoin, and no reference price (PRICE_REFERENCES)`,
    );
  }
  const anchor = reference ? scaled(reference.priceUsd) : weightedMedian(crossOrg);
  const counted = crossOrg.filter((t) => withinDeviation(t.price, anchor, rules.maxDeviationBasisPoints));
  const organizations = new Set(counted.flatMap((t) => [t.trade.makerOrganizationId, t.trade.takerOrganizationId])).size;
  const band = `within ${formatScaled(rules.maxDeviationBasisPoints, 2)}% of ${reference ? `the reference ${reference.priceUsd}` : 'their volume-weighted median'}`;
  if (organizations < rules.minOrganizations) {
    return fallback(`${organizations} organisation(s) traded ${symbol} ${window} ${band} (self-trades excluded); at least ${rules.minOrganizations} are needed`);
  }
  const markets = [...new Set(counted.map((t) => t.trade.market))].sort().join(',');
  const asOf = counted.reduce((latest, t) => (t.trade.at > latest ? t.trade.at : latest), counted[0].trade.at);
  return { priceUsd: formatScaled(weightedMedian(counted), SCALE), source: `orderbook:${markets}`, asOf, organizations };
}
