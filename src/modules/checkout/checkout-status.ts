import { CheckoutModel, SETTLED_STATUSES } from './checkout.model';
import type { CheckoutStatus, CheckoutTransferKind } from './checkout.domain';

type Amounts = Pick<CheckoutModel, 'status' | 'expectedRaw' | 'receivedRaw' | 'confirmingRaw' | 'seenRaw' | 'expiresAt'>;

/** How long after a checkout's expiry a payment mined before it may still be recorded by the deposit watcher. */
export const SIGHTING_GRACE_MS = 15 * 60_000;

/**
 * The status a checkout's amounts put it in. A payment still confirming holds it in CONFIRMING;
 * once every counted payment is confirmed the total decides PAID, OVERPAID or UNDERPAID (which
 * stays open for a top-up until the expiry, and stays UNDERPAID after it). Nothing counted by the
 * expiry: EXPIRED. CANCELLED is final. Amounts are base units of the checkout's own asset: only
 * deposits of that asset on its chain are ever added to them (see classify).
 */
export function statusOf(c: Amounts, now: Date): CheckoutStatus {
  if (c.status === 'CANCELLED') return 'CANCELLED';
  const expected = BigInt(c.expectedRaw);
  const received = BigInt(c.receivedRaw);
  if (BigInt(c.confirmingRaw) > 0n) return 'CONFIRMING';
  if (received > 0n) return received < expected ? 'UNDERPAID' : received === expected ? 'PAID' : 'OVERPAID';
  if (now.getTime() >= c.expiresAt.getTime()) return 'EXPIRED';
  return BigInt(c.seenRaw) > 0n ? 'DETECTED' : 'AWAITING_PAYMENT';
}

/** What the deposit watcher knows of a deposit to a checkout address. */
export interface DepositFacts {
  blockchainId: string;
  assetId: string;
  blockTimestamp: Date;
  /** The AML flagger marked it: the sender is on a sanctions list. */
  amlFlagged: boolean;
}

/**
 * What a deposit to a checkout address is. Only a deposit of the checkout's asset on its chain from
 * a sender not on a sanctions list can count: anything else is AML_FLAGGED, WRONG_CHAIN or
 * WRONG_ASSET (in that order), whatever the checkout's state. Of the rest, a second payment after
 * it was paid is a REPEAT; one mined after the expiry (by its block's time) or recorded once the
 * checkout was cancelled (whenever it was mined: cancelled is final) is LATE; anything else is a PAYMENT and counts, even if the watcher had already marked the
 * checkout EXPIRED (the payer paid in time; the chain was slower than the clock). A payment link may
 * still turn a PAYMENT into OVER_LIMIT (paymentAdmitted).
 */
export function classify(c: Pick<CheckoutModel, 'status' | 'expiresAt' | 'blockchainId' | 'assetId'>, deposit: DepositFacts): CheckoutTransferKind {
  if (deposit.amlFlagged) return 'AML_FLAGGED';
  if (deposit.blockchainId !== c.blockchainId) return 'WRONG_CHAIN';
  if (deposit.assetId !== c.assetId) return 'WRONG_ASSET';
  if (SETTLED_STATUSES.includes(c.status)) return 'REPEAT';
  if (c.status === 'CANCELLED' || deposit.blockTimestamp.getTime() > c.expiresAt.getTime()) return 'LATE';
  return 'PAYMENT';
}

/**
 * Whether a checkout holds one of its payment link's payments: from the moment a counted payment to
 * it is recorded, while it confirms (CONFIRMING), and while an underpaid checkout may still be
 * topped up (until its expiry plus the sighting grace). An unpaid session holds nothing; a paid one
 * has consumed its payment (paymentsConsumed) instead.
 */
export function holdsPayment(c: Pick<CheckoutModel, 'status' | 'expiresAt'>, now: Date): boolean {
  if (c.status === 'CONFIRMING') return true;
  return c.status === 'UNDERPAID' && now.getTime() < c.expiresAt.getTime() + SIGHTING_GRACE_MS;
}

/**
 * Whether a payment just recorded to checkout `c` may count under its link's paymentLimit: always
 * when the link is unlimited or the checkout already holds a payment; otherwise only while the
 * payments consumed and those held by the link's other checkouts leave one free.
 */
export function paymentAdmitted(link: { paymentLimit: number | null; paymentsConsumed: number }, heldByOthers: number, c: Pick<CheckoutModel, 'status' | 'expiresAt'>, now: Date): boolean {
  if (link.paymentLimit === null || holdsPayment(c, now)) return true;
  return link.paymentsConsumed + heldByOthers < link.paymentLimit;
}

/**
 * Why a LATE deposit is late: mined after the expiry, or mined in time (perhaps before the
 * cancellation) but recorded once the checkout was cancelled.
 */
export type LateCause = 'EXPIRED' | 'CANCELLED';

export function lateCause(c: Pick<CheckoutModel, 'status' | 'expiresAt'>, blockTimestamp: Date): LateCause {
  return c.status === 'CANCELLED' && blockTimestamp.getTime() <= c.expiresAt.getTime() ? 'CANCELLED' : 'EXPIRED';
}

/** An asset on a chain, as a deposit or a checkout names it. */
export interface Denomination {
  symbol: string;
  chain: string;
}

/** Why a deposit of `kind` was not counted, in the merchant's words; null for a PAYMENT. `late`: why a LATE one is. */
export function whyNotCounted(kind: CheckoutTransferKind, paid: Denomination, asked: Denomination, late: LateCause = 'EXPIRED'): string | null {
  switch (kind) {
    case 'PAYMENT':
      return null;
    case 'LATE':
      return late === 'CANCELLED' ? 'The checkout was cancelled before this payment was recorded' : 'Mined after the checkout expired';
    case 'REPEAT':
      return 'Arrived after the checkout was paid';
    case 'WRONG_ASSET':
      return `${paid.symbol} is not the asset asked for: the checkout takes ${asked.symbol} on ${asked.chain} only`;
    case 'WRONG_CHAIN':
      return `Sent on ${paid.chain}: the checkout takes ${asked.symbol} on ${asked.chain} only`;
    case 'AML_FLAGGED':
      return 'The sender is on a sanctions list: the funds are held at the checkout address for AML review';
    case 'OVER_LIMIT':
      return 'The payment link had already taken all its payments';
  }
}
