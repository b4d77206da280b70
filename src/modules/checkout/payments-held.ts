import type { Knex } from 'knex';
import { SIGHTING_GRACE_MS } from './checkout-status';

/**
 * How many of a link's checkouts hold one of its payments now (checkout-status.ts holdsPayment, as
 * one query): a counted payment is confirming, or the checkout is underpaid and may still be topped
 * up. `except`: a checkout left out of the count (the one asking). The checkouts table is this module's.
 */
export async function paymentsHeld(db: Knex | Knex.Transaction, paymentLinkId: string, now: Date, except?: string): Promise<number> {
  const [{ count }] = await db('checkouts')
    .where({ paymentLinkId })
    .where((q) => q.where('status', 'CONFIRMING').orWhere((u) => u.where('status', 'UNDERPAID').where('expiresAt', '>', new Date(now.getTime() - SIGHTING_GRACE_MS))))
    .modify((q) => (except ? q.whereNot('id', except) : q))
    .count({ count: '*' });
  return Number(count);
}
