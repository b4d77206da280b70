import type { MatchingEngine } from './matching-engine';
import type { OrderType, PlaceOrder, Side, TimeInForce } from './types';

/**
 * A decimal amount measured in one of the market's steps (a price in ticks, a quantity in lots),
 * as the caller's decimal conversion found it: `whole` is the number of steps, or null when the
 * amount is not a whole number of them.
 */
export interface Steps {
  positive: boolean;
  whole: bigint | null;
}

/** A placement as the API states it, before it is an engine command. */
export interface PlacementTerms {
  id: string;
  owner: string;
  side: Side;
  type: OrderType;
  timeInForce: TimeInForce;
  postOnly: boolean;
  quantity: Steps;
  /** Absent (undefined) is a MARKET order's price; a LIMIT order must have one. */
  price?: Steps;
}

/** How the market's lots relate to the base asset's base units (the quote's are the engine's `notionalUnit`). */
export interface MarketUnits {
  /** Base units of the base asset in one lot. */
  lotUnits: bigint;
}

/** Why a placement is refused before it reaches the book; the caller words it for its API. */
export type PlacementRefusal =
  | 'QUANTITY_NOT_POSITIVE'
  | 'QUANTITY_OFF_LOT'
  | 'QUANTITY_TOO_LARGE'
  | 'PRICE_REQUIRED'
  | 'PRICE_NOT_POSITIVE'
  | 'PRICE_OFF_TICK'
  | 'NOTIONAL_TOO_LARGE'
  | 'PRICE_NOT_ALLOWED'
  | 'POST_ONLY_NOT_LIMIT'
  | 'BELOW_MIN_NOTIONAL';

/** An admitted placement: the engine's command and what it locks, in base units of the asset it spends. */
export interface AdmittedPlacement {
  command: PlaceOrder;
  lock: bigint;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The market's rules for a new order, decided in one place: quantity a positive whole number of
 * lots, a LIMIT price a positive whole number of ticks (a MARKET order has none and cannot be
 * post-only), ticks × lots a safe integer, the minimum notional; then the lock: a SELL its lots,
 * a BUY what the engine quotes (`buyLock`: notional plus fee, or a MARKET BUY priced on the asks).
 * Checked in that order, so the first broken rule is the one reported.
 */
export function admitPlacement(engine: MatchingEngine, units: MarketUnits, terms: PlacementTerms): AdmittedPlacement | PlacementRefusal {
  const { quantity, price } = terms;
  if (!quantity.positive) return 'QUANTITY_NOT_POSITIVE';
  if (quantity.whole === null) return 'QUANTITY_OFF_LOT';
  const lots = quantity.whole;
  if (lots > MAX_SAFE) return 'QUANTITY_TOO_LARGE';

  let ticks: bigint | undefined;
  if (terms.type === 'LIMIT') {
    if (price === undefined) return 'PRICE_REQUIRED';
    if (!price.positive) return 'PRICE_NOT_POSITIVE';
    if (price.whole === null) return 'PRICE_OFF_TICK';
    ticks = price.whole;
    if (ticks * lots > MAX_SAFE) return 'NOTIONAL_TOO_LARGE';
  } else {
    if (price !== undefined) return 'PRICE_NOT_ALLOWED';
    if (terms.postOnly) return 'POST_ONLY_NOT_LIMIT';
  }

  const command: PlaceOrder = {
    kind: 'place',
    id: terms.id,
    owner: terms.owner,
    side: terms.side,
    type: terms.type,
    price: ticks === undefined ? undefined : Number(ticks),
    quantity: Number(lots),
    timeInForce: terms.timeInForce,
    postOnly: terms.postOnly,
  };
  if (engine.check(command) === 'BELOW_MIN_NOTIONAL') return 'BELOW_MIN_NOTIONAL';
  const lock = terms.side === 'SELL' ? lots * units.lotUnits : engine.buyLock(command.quantity, command.price);
  return { command, lock };
}
