/**
 * The api-keys module's face: what other modules may use of it. API keys: issue, rotate, revoke; onboarding an organisation.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { ApiKeyService } from './api-key.service';

export { ApiKeyHost, ApiKeyStatus } from './api-key.domain';
export { apiKeyLabels, newestAgentKeyPrefix } from './api-key-rows';
export type { ApiKeyLabel } from './api-key-rows';
export { ApiKeyService } from './api-key.service';

export { createApiKeysServices } from './api-keys-services';

/** The api-keys module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface ApiKeysServices {
  apiKeys: ApiKeyService;
}
