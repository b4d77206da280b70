/**
 * The checkout module's face: what other modules may use of it. The checkout mechanics payment links and payment intents share, and the deposits matched to them.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { CheckoutDeposits } from './checkout-deposits';
import type { CheckoutDesk } from './checkout-desk';

export { CheckoutDesk, assetRef, chainRef } from './checkout-desk';
export type { AssetRef, ChainRef, CheckoutOwner, CheckoutTransferView, CheckoutView } from './checkout-desk';
export { qrSvg } from './checkout-qr';
export { SIGHTING_GRACE_MS, paymentAdmitted } from './checkout-status';
export { askedUnits } from './checkout-amount';
export { paymentsHeld } from './payments-held';
export { openCheckouts } from './address-retirement';
export { SETTLED_STATUSES } from './checkout.model';
export { CheckoutStatus, CheckoutTransferKind, CheckoutTransferStatus } from './checkout.domain';

// The row shapes, for types only: a checkout's owners (payment links, payment intents) read them through CheckoutDesk.
export type { CheckoutModel, CheckoutTransferModel } from './checkout.model';

export { createCheckoutServices } from './checkout-services';

/** The checkout module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface CheckoutServices {
  /** Payments: the checkout mechanics links and intents share, and the deposits matched to them. */
  checkouts: CheckoutDesk;
  checkoutDeposits: CheckoutDeposits;
}
