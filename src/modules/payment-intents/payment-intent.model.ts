import { Model } from 'objection';
import type { PaymentIntentStatus } from './payment-intent.domain';

/**
 * REQUIRES_PAYMENT: waiting for the deposit. PROCESSING: a payment is detected or confirming.
 * SUCCEEDED / OVERPAID / UNDERPAID: the confirmed total met / exceeded / fell short of the amount.
 * EXPIRED: nothing arrived in time. CANCELLED: the merchant cancelled it.
 */

export class PaymentIntentModel extends Model {
  static override tableName = 'payment_intents';
  id!: string;
  organizationId!: string;
  status!: PaymentIntentStatus;
  description!: string | null;
  metadata!: Record<string, unknown>;
  cancellationReason!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}
