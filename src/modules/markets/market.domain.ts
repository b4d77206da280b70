/** The market vocabulary, as services take and return it; market.types.ts registers the enum for GraphQL. */
export const MarketStatus = {
  /** Accepts orders. */
  ACTIVE: 'ACTIVE',
  /** Refuses new orders (MARKET_HALTED); cancels still work. */
  HALTED: 'HALTED',
} as const;
export type MarketStatus = (typeof MarketStatus)[keyof typeof MarketStatus];

/** A market's symbol: BASE-QUOTE in capitals and digits, e.g. ETH-USDC. */
export const MARKET_SYMBOL = /^[A-Z0-9]{1,16}-[A-Z0-9]{1,16}$/;
export const MARKET_SYMBOL_RULE = 'must look like BASE-QUOTE, e.g. ETH-USDC';
