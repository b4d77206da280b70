import type { Platform } from './platform/platform';
import { OrganizationService } from './modules/organizations/organization.service';
import { ApiKeyService } from './modules/api-keys/api-key.service';
import { EngineStatusService } from './modules/engine-status/engine-status.service';
import { WebhookService } from './modules/webhooks/webhook.service';
import { DeliveryScheduler } from './modules/webhooks/delivery-scheduler';
import { deliveryQueue } from './modules/webhooks/webhook-delivery';
import { OutboundGuard } from './platform/net/outbound-guard';
import type { LiveEventFeed } from './platform/events/live-feed';

/** Every domain service, wired once per process and handed to resolvers through the context. */
export interface Services {
  organizations: OrganizationService;
  apiKeys: ApiKeyService;
  engineStatus: EngineStatusService;
  webhooks: WebhookService;
  /** Committed events as they happen, for GraphQL subscriptions. */
  liveFeed: LiveEventFeed;
}

export function createServices(platform: Platform): Services {
  const { db, config } = platform;
  const organizations = new OrganizationService(db);
  const apiKeys = new ApiKeyService(db, config.KEEL_ENV, config.API_KEY_ROTATION_GRACE_SECONDS, platform.authenticator, platform.redis, organizations);
  const webhooks = new WebhookService(db, new OutboundGuard(config.WEBHOOKS_ALLOW_PRIVATE_URLS), new DeliveryScheduler(deliveryQueue(platform)), config.WEBHOOK_SECRET_ROTATION_GRACE_SECONDS);
  return { organizations, apiKeys, engineStatus: new EngineStatusService(config.KEEL_ENV), webhooks, liveFeed: platform.liveFeed };
}
