import type { Platform } from '../../platform/platform';
import type { ChainService } from '../chains';
import type { AddressService } from '../wallets';
import type { AutoSweeper } from '../withdrawals';
import { CheckoutDeposits } from './checkout-deposits';
import { CheckoutDesk } from './checkout-desk';

/** The checkout module's services (CheckoutServices), built from what they use. */
export function createCheckoutServices(platform: Pick<Platform, 'db' | 'config'>, deps: { chains: ChainService; addresses: AddressService; sweeper: AutoSweeper }) {
  const checkouts = new CheckoutDesk(platform.db, deps.addresses, deps.chains, platform.config.PAYMENT_CONFIRMATIONS);
  return { checkouts, checkoutDeposits: new CheckoutDeposits(checkouts, deps.sweeper) };
}
