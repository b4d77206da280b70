import { Model } from 'objection';
import type { DeliveryStatus } from './webhook.domain';

export class WebhookSubscriptionModel extends Model {
  static override tableName = 'webhook_subscriptions';
  id!: string;
  organizationId!: string;
  developerId!: string | null;
  name!: string;
  description!: string | null;
  url!: string;
  eventTypes!: string[];
  isActive!: boolean;
  failingSince!: Date | null;
  deactivatedAt!: Date | null;
  deactivationReason!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}


export class WebhookDeliveryModel extends Model {
  static override tableName = 'webhook_deliveries';
  id!: string;
  organizationId!: string;
  subscriptionId!: string;
  eventId!: string;
  eventSequence!: string;
  type!: string;
  payload!: Record<string, unknown>;
  status!: DeliveryStatus;
  attempts!: number;
  responseStatusCode!: number | null;
  errorMessage!: string | null;
  nextAttemptAt!: Date | null;
  leaseUntil!: Date | null;
  lastAttemptAt!: Date | null;
  deliveredAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}
