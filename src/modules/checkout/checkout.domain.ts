/** The checkout vocabulary, as services take and return it; checkout.types.ts registers it for GraphQL. */
/**
 * AWAITING_PAYMENT: nothing seen yet. DETECTED: the chain head shows funds at the address, not yet
 * confirmed. CONFIRMING: a payment is recorded and gathering confirmations. PAID / OVERPAID /
 * UNDERPAID: every counted payment has its confirmations and the total is equal to / above / below
 * the amount. EXPIRED: nothing counted arrived in time. CANCELLED: the owner cancelled it (intents).
 */
export const CheckoutStatus = {
  AWAITING_PAYMENT: 'AWAITING_PAYMENT',
  DETECTED: 'DETECTED',
  CONFIRMING: 'CONFIRMING',
  PAID: 'PAID',
  UNDERPAID: 'UNDERPAID',
  OVERPAID: 'OVERPAID',
  EXPIRED: 'EXPIRED',
  CANCELLED: 'CANCELLED',
} as const;
export type CheckoutStatus = (typeof CheckoutStatus)[keyof typeof CheckoutStatus];

export const CheckoutTransferKind = {
  PAYMENT: 'PAYMENT',
  LATE: 'LATE',
  REPEAT: 'REPEAT',
  WRONG_ASSET: 'WRONG_ASSET',
  WRONG_CHAIN: 'WRONG_CHAIN',
  AML_FLAGGED: 'AML_FLAGGED',
  OVER_LIMIT: 'OVER_LIMIT',
} as const;
export type CheckoutTransferKind = (typeof CheckoutTransferKind)[keyof typeof CheckoutTransferKind];

export const CheckoutTransferStatus = {
  CONFIRMING: 'CONFIRMING',
  CONFIRMED: 'CONFIRMED',
  REVERTED: 'REVERTED',
} as const;
export type CheckoutTransferStatus = (typeof CheckoutTransferStatus)[keyof typeof CheckoutTransferStatus];
