import type { Platform } from '../../platform/platform';
import type { ChainService } from '../chains';
import type { CheckoutDesk } from '../checkout';
import type { MasterWalletService } from '../wallets';
import { PaymentLinkCheckouts } from './payment-link-checkouts';
import { PaymentLinkService } from './payment-link.service';
import { PublicCheckoutService } from './public-checkout.service';

/** The payment-links module's services (PaymentLinksServices), built from what they use; links own their checkouts at the desk. */
export function createPaymentLinksServices(platform: Pick<Platform, 'db' | 'config' | 'outbox' | 'unitOfWork'>, deps: { chains: ChainService; masterWallets: MasterWalletService; checkouts: CheckoutDesk }) {
  const { db, config, outbox, unitOfWork } = platform;
  const { chains, checkouts } = deps;
  const paymentLinks = new PaymentLinkService(db, outbox, deps.masterWallets, chains, checkouts, unitOfWork, config.CHECKOUT_PUBLIC_URL);
  checkouts.own('link', new PaymentLinkCheckouts(paymentLinks, outbox));
  return { paymentLinks, publicCheckout: new PublicCheckoutService(db, chains, deps.masterWallets, checkouts, unitOfWork, config.CHECKOUT_TTL_SECONDS) };
}
