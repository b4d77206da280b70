import type { Platform } from '../../platform/platform';
import { OutboundGuard } from '../../platform/net/outbound-guard';
import { DeliveryScheduler } from './delivery-scheduler';
import { deliveryQueue } from './webhook-delivery';
import { WebhookService } from './webhook.service';

/** The webhooks module's services (WebhooksServices), built from what they use. */
export function createWebhooksServices(platform: Platform) {
  const { db, config } = platform;
  const deliveryScheduler = new DeliveryScheduler(deliveryQueue(platform));
  const webhookGuard = new OutboundGuard(config.WEBHOOKS_ALLOW_PRIVATE_URLS);
  const webhooks = new WebhookService(db, webhookGuard, deliveryScheduler, config.WEBHOOK_SECRET_ROTATION_GRACE_SECONDS, platform.secretBox, platform.unitOfWork, config.WEBHOOK_MAX_ACTIVE_SUBSCRIPTIONS);
  return { webhooks, deliveryScheduler, webhookGuard };
}
