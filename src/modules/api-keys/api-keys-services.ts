import type { Platform } from '../../platform/platform';
import type { OrganizationService } from '../organizations';
import { ApiKeyService } from './api-key.service';

/** The api-keys module's services (ApiKeysServices), built from what they use. */
export function createApiKeysServices(platform: Pick<Platform, 'db' | 'config' | 'authenticator' | 'redis' | 'unitOfWork'>, deps: { organizations: OrganizationService }) {
  const { db, config } = platform;
  return { apiKeys: new ApiKeyService(db, config.KEEL_ENV, config.API_KEY_ROTATION_GRACE_SECONDS, platform.authenticator, platform.redis, deps.organizations, platform.unitOfWork) };
}
