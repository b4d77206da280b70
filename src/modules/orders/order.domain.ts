/** The order book's vocabulary, as services take and return it. Names and values match the engine's and the API's. */
export enum OrderSide {
  BUY = 'BUY',
  SELL = 'SELL',
}

export enum OrderType {
  LIMIT = 'LIMIT',
  MARKET = 'MARKET',
}

export enum TimeInForce {
  GTC = 'GTC',
  IOC = 'IOC',
  FOK = 'FOK',
}

export enum OrderStatus {
  OPEN = 'OPEN',
  PARTIALLY_FILLED = 'PARTIALLY_FILLED',
  FILLED = 'FILLED',
  CANCELLED = 'CANCELLED',
  REJECTED = 'REJECTED',
  EXPIRED = 'EXPIRED',
}

export enum Liquidity {
  MAKER = 'MAKER',
  TAKER = 'TAKER',
}

export enum SettlementStatus {
  QUEUED = 'QUEUED',
  BATCHED = 'BATCHED',
  SUBMITTED = 'SUBMITTED',
  CONFIRMED = 'CONFIRMED',
  FAILED = 'FAILED',
  REORGED = 'REORGED',
  REPLACED = 'REPLACED',
}

/** The statuses of an order that rests in the book and can still trade or be cancelled. */
export const LIVE_STATUSES: readonly OrderStatus[] = [OrderStatus.OPEN, OrderStatus.PARTIALLY_FILLED];

/** A placement as the API takes it: decimals as strings, in the market's units. */
export interface PlaceOrderInput {
  walletId: string;
  market: string;
  side: OrderSide;
  /** Default LIMIT. */
  type?: OrderType;
  price?: string | null;
  quantity: string;
  /** Default GTC. */
  timeInForce?: TimeInForce;
  postOnly?: boolean;
  clientOrderId?: string | null;
}
