import type { Platform } from './platform/platform';
import { OrganizationService } from './modules/organizations/organization.service';
import { ApiKeyService } from './modules/api-keys/api-key.service';
import { EngineStatusService } from './modules/engine-status/engine-status.service';

/** Every domain service, wired once per process and handed to resolvers through the context. */
export interface Services {
  organizations: OrganizationService;
  apiKeys: ApiKeyService;
  engineStatus: EngineStatusService;
}

export function createServices(platform: Platform): Services {
  const { db, config } = platform;
  const organizations = new OrganizationService(db);
  const apiKeys = new ApiKeyService(db, config.KEEL_ENV, config.API_KEY_ROTATION_GRACE_SECONDS, platform.authenticator, platform.redis, organizations);
  return { organizations, apiKeys, engineStatus: new EngineStatusService(config.KEEL_ENV) };
}
