import { Model } from 'objection';
import type { CheckoutStatus, CheckoutTransferKind, CheckoutTransferStatus } from './checkout.domain';

/** Still able to count a payment. */
export const OPEN_STATUSES: CheckoutStatus[] = ['AWAITING_PAYMENT', 'DETECTED', 'CONFIRMING', 'UNDERPAID'];
/** Paid in full (an overpayment is a payment). */
export const SETTLED_STATUSES: CheckoutStatus[] = ['PAID', 'OVERPAID'];

export interface SolanaPayTerms {
  reference: string;
  label: string;
  message: string | null;
}

/** One fresh deposit address awaiting an exact amount of one asset, for a payment link or an intent. */
export class CheckoutModel extends Model {
  static override tableName = 'checkouts';
  id!: string;
  organizationId!: string;
  paymentLinkId!: string | null;
  paymentIntentId!: string | null;
  masterWalletId!: string;
  blockchainId!: string;
  assetId!: string;
  addressId!: string;
  depositAddress!: string;
  expectedRaw!: string;
  receivedRaw!: string;
  confirmingRaw!: string;
  seenRaw!: string;
  status!: CheckoutStatus;
  expiresAt!: Date;
  paidAt!: Date | null;
  /** A checkout paid on Solana: its Solana Pay request's fresh reference key, and what the payer's wallet shows. Null on EVM. */
  solanaPay!: SolanaPayTerms | null;
  /** When its address was deactivated, past the expiry and the late-payment grace (CheckoutAddressRetirement). */
  addressRetiredAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}

/**
 * PAYMENT counts towards the amount. None of the others counts: LATE was mined after the expiry or
 * recorded after a cancellation; REPEAT after it was paid; WRONG_ASSET is another asset on the checkout's chain;
 * WRONG_CHAIN arrived at the address on another chain; AML_FLAGGED came from a sanctioned sender;
 * OVER_LIMIT found the payment link with no payment left for it.
 */
export const CHECKOUT_TRANSFER_KINDS: CheckoutTransferKind[] = ['PAYMENT', 'LATE', 'REPEAT', 'WRONG_ASSET', 'WRONG_CHAIN', 'AML_FLAGGED', 'OVER_LIMIT'];

/** A deposit to a checkout address (for a payment link: a payment-link transfer). */
export class CheckoutTransferModel extends Model {
  static override tableName = 'checkout_transfers';
  id!: string;
  organizationId!: string;
  checkoutId!: string;
  chainTransferId!: string;
  /** The deposit's own asset and chain, which may not be the checkout's. */
  assetId!: string;
  blockchainId!: string;
  kind!: CheckoutTransferKind;
  status!: CheckoutTransferStatus;
  txHash!: string;
  fromAddress!: string;
  rawValue!: string;
  blockNumber!: string;
  confirmations!: number;
  requiredConfirmations!: number;
  createdAt!: Date;
  updatedAt!: Date;
}
