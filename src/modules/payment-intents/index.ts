/**
 * The payment-intents module's face: what other modules may use of it. Payment intents: one-off payments on a checkout.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { PaymentIntentService } from './payment-intent.service';

export { createPaymentIntentsServices } from './payment-intents-services';

/** The payment-intents module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface PaymentIntentsServices {
  paymentIntents: PaymentIntentService;
}
