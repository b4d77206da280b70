import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import type { CheckoutOwner } from '../checkout';
import { CheckoutStatus, SETTLED_STATUSES, paymentAdmitted, type CheckoutModel, type CheckoutTransferModel } from '../checkout';
import { PaymentLinkModel } from './payment-link.model';
import { paymentsHeld } from '../checkout';
import type { PaymentLinkService } from './payment-link.service';

/**
 * What a payment link does when one of its checkouts moves: a payment recorded to a checkout holds
 * one of a limited link's payments if one is free (else it is OVER_LIMIT and not counted); a
 * checkout paid in full consumes it (paymentsConsumed, payment_link.updated; a reorg that takes
 * the payment back gives it back), and every deposit to a checkout address is a payment-link transfer
 * (payment_link_transfer.created, then .updated as it gathers confirmations or is reverted).
 */
export class PaymentLinkCheckouts implements CheckoutOwner {
  constructor(
    private readonly links: PaymentLinkService,
    private readonly outbox: Outbox,
  ) {}

  async statusChanged(trx: Knex.Transaction, checkout: CheckoutModel, previous: CheckoutStatus): Promise<void> {
    const settled = SETTLED_STATUSES.includes(checkout.status);
    if (settled === SETTLED_STATUSES.includes(previous)) return;
    const [row] = await trx('payment_links')
      .where({ id: checkout.paymentLinkId })
      .update({ paymentsConsumed: trx.raw(`payments_consumed ${settled ? '+' : '-'} 1`), updatedAt: trx.fn.now() })
      .returning('*');
    await this.links.publish(trx, PaymentLinkModel.fromDatabaseJson(row), 'payment_link.updated');
  }

  /**
   * The link is read under its row lock, limited or not: two checkouts' payments cannot both take its
   * last payment, and a limit set meanwhile (update, under the same lock) counts this payment.
   */
  async admits(trx: Knex.Transaction, checkout: CheckoutModel): Promise<boolean> {
    const link = await PaymentLinkModel.query(trx).findById(checkout.paymentLinkId!).forUpdate();
    if (!link || link.paymentLimit === null) return true;
    const now = new Date();
    return paymentAdmitted(link, await paymentsHeld(trx, link.id, now, checkout.id), checkout, now);
  }

  async transferChanged(trx: Knex.Transaction, checkout: CheckoutModel, transfer: CheckoutTransferModel, created: boolean): Promise<void> {
    const [view] = await this.links.transferViews([transfer], trx);
    const link = await PaymentLinkModel.query(trx).findById(checkout.paymentLinkId!);
    await this.outbox.publish(trx, {
      organizationId: checkout.organizationId,
      type: created ? 'payment_link_transfer.created' : 'payment_link_transfer.updated',
      data: {
        ...view,
        paymentLink: link ? { id: link.id, name: link.name, slug: link.slug } : null,
        checkout: { id: checkout.id, status: checkout.status, amountExpectedRaw: checkout.expectedRaw, amountReceivedRaw: checkout.receivedRaw, expiresAt: checkout.expiresAt.toISOString() },
      },
    });
  }
}
