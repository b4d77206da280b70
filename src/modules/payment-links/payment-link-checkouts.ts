import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import type { CheckoutOwner } from '../checkout/checkout-desk';
import { CheckoutModel, CheckoutStatus, CheckoutTransferModel, SETTLED_STATUSES } from '../checkout/checkout.model';
import { PaymentLinkModel } from './payment-link.model';
import type { PaymentLinkService } from './payment-link.service';

/**
 * What a payment link does when one of its checkouts moves: a checkout paid in full consumes one
 * payment of the link (paymentsConsumed, payment_link.updated; a reorg that takes the payment
 * back gives it back), and every deposit to a checkout address is a payment-link transfer
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
