import { CheckoutModel, CheckoutStatus, CheckoutTransferKind, SETTLED_STATUSES } from './checkout.model';

type Amounts = Pick<CheckoutModel, 'status' | 'expectedRaw' | 'receivedRaw' | 'confirmingRaw' | 'seenRaw' | 'expiresAt'>;

/**
 * The status a checkout's amounts put it in. A payment still confirming holds it in CONFIRMING;
 * once every counted payment is confirmed the total decides PAID, OVERPAID or UNDERPAID (which
 * stays open for a top-up until the expiry, and stays UNDERPAID after it). Nothing counted by the
 * expiry: EXPIRED. CANCELLED is final.
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

/**
 * What a deposit to a checkout address is: a second payment after it was paid is a REPEAT; one
 * mined after the expiry (by its block's time) or after a cancellation is LATE; anything else is a
 * PAYMENT and counts, even if the watcher had already marked the checkout EXPIRED (the payer paid
 * in time; the chain was slower than the clock).
 */
export function classify(c: Pick<CheckoutModel, 'status' | 'expiresAt'>, blockTimestamp: Date): CheckoutTransferKind {
  if (SETTLED_STATUSES.includes(c.status)) return 'REPEAT';
  if (c.status === 'CANCELLED' || blockTimestamp.getTime() > c.expiresAt.getTime()) return 'LATE';
  return 'PAYMENT';
}
