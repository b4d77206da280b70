/** The order book's vocabulary, as services take and return it. Names and values match the engine's and the API's. */
export const OrderSide = {
  BUY: 'BUY',
  SELL: 'SELL',
} as const;
export type OrderSide = (typeof OrderSide)[keyof typeof OrderSide];

export const OrderType = {
  LIMIT: 'LIMIT',
  MARKET: 'MARKET',
} as const;
export type OrderType = (typeof OrderType)[keyof typeof OrderType];

export const TimeInForce = {
  GTC: 'GTC',
  IOC: 'IOC',
  FOK: 'FOK',
} as const;
export type TimeInForce = (typeof TimeInForce)[keyof typeof TimeInForce];

export const OrderStatus = {
  OPEN: 'OPEN',
  PARTIALLY_FILLED: 'PARTIALLY_FILLED',
  FILLED: 'FILLED',
  CANCELLED: 'CANCELLED',
  REJECTED: 'REJECTED',
  EXPIRED: 'EXPIRED',
} as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

export const Liquidity = {
  MAKER: 'MAKER',
  TAKER: 'TAKER',
} as const;
export type Liquidity = (typeof Liquidity)[keyof typeof Liquidity];

export const SettlementStatus = {
  QUEUED: 'QUEUED',
  BATCHED: 'BATCHED',
  SUBMITTED: 'SUBMITTED',
  CONFIRMED: 'CONFIRMED',
  FAILED: 'FAILED',
  REORGED: 'REORGED',
  REPLACED: 'REPLACED',
} as const;
export type SettlementStatus = (typeof SettlementStatus)[keyof typeof SettlementStatus];

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

/**
 * A cancel-replace (amend) of a live order: the new order keeps the old one's wallet, market, side
 * and type; what is not given is taken from the old order (price, time in force, post-only) or its
 * unfilled rest (quantity). The new order queues behind the orders already at its price.
 */
export interface ReplaceOrderInput {
  price?: string | null;
  quantity?: string | null;
  timeInForce?: TimeInForce | null;
  postOnly?: boolean | null;
  clientOrderId?: string | null;
}

/** An order as the API shows it: decimals as strings in the market's units. */
export interface Order {
  id: string;
  clientOrderId: string | null;
  marketId: string;
  /** The market symbol. */
  market: string;
  walletId: string;
  side: OrderSide;
  type: OrderType;
  timeInForce: TimeInForce;
  postOnly: boolean;
  /** Limit price; null for MARKET. */
  price: string | null;
  quantity: string;
  filledQuantity: string;
  remainingQuantity: string;
  /** Volume-weighted price of the fills. */
  averagePrice: string | null;
  /** Fees paid, in the quote asset. */
  fee: string;
  status: OrderStatus;
  statusReason: string | null;
  /** Market sequence of the event that accepted (or rejected) the order. */
  sequence: string;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A trade as the market's public tape shows it (market trades, the `trades:<SYMBOL>` feed): what
 * happened at what price, never whose orders, wallets or fees (the wallet trade history is another
 * organisation's to see only if it placed an order with the wallet).
 */
export interface MarketTrade {
  id: string;
  marketId: string;
  market: string;
  sequence: string;
  takerSide: OrderSide;
  price: string;
  quantity: string;
  settlementBatchId: string | null;
  settlementStatus: SettlementStatus;
  createdAt: Date;
}

/** A trade with its orders, wallets and fees: shown only to an organisation entitled to the wallet's trades. */
export interface Trade extends MarketTrade {
  makerOrderId: string;
  takerOrderId: string;
  makerWalletId: string;
  takerWalletId: string;
  makerFee: string;
  takerFee: string;
}

/** One trade seen from one order's side. */
export interface Fill {
  id: string;
  tradeId: string;
  orderId: string;
  marketId: string;
  side: OrderSide;
  liquidity: Liquidity;
  price: string;
  quantity: string;
  fee: string;
  sequence: string;
  createdAt: Date;
}

export interface BookLevel {
  price: string;
  quantity: string;
  orders: number;
}

/** Depth per price level, best first on each side. */
export interface OrderBook {
  market: string;
  sequence: string;
  bids: BookLevel[];
  asks: BookLevel[];
  timestamp: Date;
}
