/**
 * The webhooks module's face: what other modules may use of it. Webhook subscriptions and their deliveries.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { OutboundGuard } from '../../platform/net/outbound-guard';
import type { DeliveryScheduler } from './delivery-scheduler';
import type { WebhookService } from './webhook.service';

export { createWebhooksServices } from './webhooks-services';

/** The webhooks module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface WebhooksServices {
  webhooks: WebhookService;
  /** Queues webhook deliveries: the service, the worker role's outbox fan-out and its sweeper share it. */
  deliveryScheduler: DeliveryScheduler;
  /** Where webhooks may be sent (private addresses only with WEBHOOKS_ALLOW_PRIVATE_URLS). */
  webhookGuard: OutboundGuard;
}
