/** The market vocabulary, as services take and return it; market.types.ts registers the enum for GraphQL. */
export enum MarketStatus {
  /** Accepts orders. */
  ACTIVE = 'ACTIVE',
  /** Refuses new orders (MARKET_HALTED); cancels still work. */
  HALTED = 'HALTED',
}
