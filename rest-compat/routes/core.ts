import type { RouteRow } from '../route-table';

/** The core host's REST endpoints (/v1). */
export const coreRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/organization', field: 'organization', envelope: 'single', summary: 'The calling organisation', tag: 'Organisation' },

  { method: 'GET', path: '/v1/api-keys', field: 'apiKeys', envelope: 'coreList', summary: 'List API keys (never their secrets)', tag: 'API keys' },
  { method: 'POST', path: '/v1/api-keys', field: 'createApiKey', body: 'input', envelope: 'single', status: 201, summary: 'Create an API key; the secret is returned once', tag: 'API keys' },
  { method: 'GET', path: '/v1/api-keys/{keyId}', field: 'apiKey', params: { keyId: 'id' }, envelope: 'single', summary: 'Get an API key', tag: 'API keys' },
  { method: 'POST', path: '/v1/api-keys/{keyId}/rotate', field: 'rotateApiKey', params: { keyId: 'id' }, body: 'input', envelope: 'single', summary: 'Rotate an API key: a new secret, the old one valid for a grace period', tag: 'API keys' },
  { method: 'DELETE', path: '/v1/api-keys/{keyId}', field: 'revokeApiKey', params: { keyId: 'id' }, envelope: 'single', summary: 'Revoke an API key at once', tag: 'API keys' },
];
