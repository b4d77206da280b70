/** The payment intents' vocabulary, as services take and return it; payment-intent.types.ts registers it for GraphQL. */
export const PaymentIntentStatus = {
  REQUIRES_PAYMENT: 'REQUIRES_PAYMENT',
  PROCESSING: 'PROCESSING',
  SUCCEEDED: 'SUCCEEDED',
  UNDERPAID: 'UNDERPAID',
  OVERPAID: 'OVERPAID',
  EXPIRED: 'EXPIRED',
  CANCELLED: 'CANCELLED',
} as const;
export type PaymentIntentStatus = (typeof PaymentIntentStatus)[keyof typeof PaymentIntentStatus];
