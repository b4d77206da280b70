/**
 * The matching engine's vocabulary. Prices are integer ticks and quantities integer lots (safe
 * integers, never fractions); the caller converts decimals at the edge using the market's tick and
 * lot size.
 */
export type Side = 'BUY' | 'SELL';
export type OrderType = 'LIMIT' | 'MARKET';
export type TimeInForce = 'GTC' | 'IOC' | 'FOK';

export interface MarketRules {
  /** Smallest price × quantity (ticks × lots) an order may have; 0 for none. MARKET orders are exempt. */
  minNotional: number;
  /** Fee rates in parts per million of the traded notional. */
  makerFeePpm: number;
  takerFeePpm: number;
  /** Base units of the quote asset in one tick × one lot: fees and buy locks are in those base units. */
  notionalUnit: bigint;
}

export interface PlaceOrder {
  kind: 'place';
  id: string;
  owner: string;
  side: Side;
  type: OrderType;
  /** Ticks; required for LIMIT, ignored for MARKET. */
  price?: number;
  /** Lots. */
  quantity: number;
  timeInForce: TimeInForce;
  postOnly?: boolean;
}

export interface CancelOrder {
  kind: 'cancel';
  id: string;
}

export type Command = PlaceOrder | CancelOrder;

export type RejectReason = 'INVALID_PRICE' | 'INVALID_QUANTITY' | 'BELOW_MIN_NOTIONAL' | 'POST_ONLY_WOULD_TAKE' | 'DUPLICATE_ORDER_ID' | 'ORDER_NOT_FOUND';

/** Why the unfilled rest of an order left the book (or never entered it). */
export type CancelReason = 'USER' | 'IOC_REMAINDER' | 'NO_LIQUIDITY' | 'FOK_NOT_FILLABLE' | 'SELF_TRADE';

interface Sequenced {
  /** Per market, +1 for every event. */
  sequence: number;
}

export type EngineEvent = Sequenced &
  (
    | { type: 'accepted'; orderId: string }
    | { type: 'rejected'; orderId: string; reason: RejectReason }
    | {
        type: 'trade';
        makerOrderId: string;
        takerOrderId: string;
        makerOwner: string;
        takerOwner: string;
        takerSide: Side;
        price: number;
        quantity: number;
        /** Base units of the quote asset. */
        makerFee: bigint;
        takerFee: bigint;
      }
    | { type: 'rested'; orderId: string; side: Side; price: number; remaining: number }
    | { type: 'filled'; orderId: string }
    /** `side` and `price` are set when the cancelled order was resting in the book (it left its level). */
    | { type: 'cancelled'; orderId: string; remaining: number; reason: CancelReason; side?: Side; price?: number }
  );

/** A resting order, as listed for snapshots and rebuilt from the durable record. */
export interface RestingOrder {
  id: string;
  owner: string;
  side: Side;
  price: number;
  remaining: number;
}

export interface DepthLevel {
  price: number;
  quantity: number;
  orders: number;
}
