/**
 * The payment-links module's face: what other modules may use of it. Payment links: reusable checkouts and their public (no API key) page and API.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { PaymentLinkService } from './payment-link.service';
import type { PublicCheckoutService } from './public-checkout.service';

export { paymentLinksByWallet } from './payment-link-rows';

export { createPaymentLinksServices } from './payment-links-services';

/** The payment-links module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface PaymentLinksServices {
  paymentLinks: PaymentLinkService;
  /** The public (no API key) side of payment links: the hosted page's API. */
  publicCheckout: PublicCheckoutService;
}
