import type { Platform } from '../../platform/platform';
import type { ChainService } from '../chains';
import type { CheckoutDesk } from '../checkout';
import type { MasterWalletService } from '../wallets';
import { PaymentIntentService } from './payment-intent.service';

/** The payment-intents module's services (PaymentIntentsServices), built from what they use; intents own their checkouts at the desk. */
export function createPaymentIntentsServices(platform: Pick<Platform, 'db' | 'config' | 'outbox' | 'unitOfWork'>, deps: { chains: ChainService; masterWallets: MasterWalletService; checkouts: CheckoutDesk }) {
  const paymentIntents = new PaymentIntentService(platform.db, platform.outbox, deps.masterWallets, deps.chains, deps.checkouts, platform.unitOfWork, platform.config.CHECKOUT_TTL_SECONDS);
  deps.checkouts.own('intent', paymentIntents);
  return { paymentIntents };
}
