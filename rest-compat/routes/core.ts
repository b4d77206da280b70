import type { RouteRow } from '../route-table';

/** The core host's REST endpoints (/v1). */
export const coreRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/organization', field: 'organization', envelope: 'single', summary: 'The calling organisation', tag: 'Organisation' },

  { method: 'GET', path: '/v1/api-keys', field: 'apiKeys', envelope: 'coreList', summary: 'List API keys (never their secrets)', tag: 'API keys' },
  { method: 'POST', path: '/v1/api-keys', field: 'createApiKey', body: 'input', envelope: 'single', status: 201, summary: 'Create an API key; the secret is returned once', tag: 'API keys' },
  { method: 'GET', path: '/v1/api-keys/{keyId}', field: 'apiKey', params: { keyId: 'id' }, envelope: 'single', summary: 'Get an API key', tag: 'API keys' },
  { method: 'POST', path: '/v1/api-keys/{keyId}/rotate', field: 'rotateApiKey', params: { keyId: 'id' }, body: 'input', envelope: 'single', summary: 'Rotate an API key: a new secret, the old one valid for a grace period', tag: 'API keys' },
  { method: 'DELETE', path: '/v1/api-keys/{keyId}', field: 'revokeApiKey', params: { keyId: 'id' }, envelope: 'single', summary: 'Revoke an API key at once', tag: 'API keys' },

  { method: 'GET', path: '/v1/webhooks/event-types', field: 'webhookEventTypes', envelope: 'single', summary: 'Every value eventTypes accepts, with the upper-case identifiers mapped to dotted names', tag: 'Webhooks' },
  { method: 'POST', path: '/v1/webhooks', field: 'createWebhook', body: 'input', envelope: 'single', status: 201, summary: 'Subscribe a URL to events; the response carries the signing secret', tag: 'Webhooks' },
  { method: 'GET', path: '/v1/webhooks', field: 'webhooks', envelope: 'coreList', summary: 'List subscriptions (limit, offset, isActive)', tag: 'Webhooks' },
  { method: 'GET', path: '/v1/webhooks/{subscriptionId}', field: 'webhook', params: { subscriptionId: 'id' }, envelope: 'single', summary: 'Get a subscription', tag: 'Webhooks' },
  { method: 'PUT', path: '/v1/webhooks/{subscriptionId}', field: 'updateWebhook', params: { subscriptionId: 'id' }, body: 'input', envelope: 'single', summary: 'Update url, isActive (true reactivates), eventTypes, name or description', tag: 'Webhooks' },
  { method: 'DELETE', path: '/v1/webhooks/{subscriptionId}', field: 'deleteWebhook', params: { subscriptionId: 'id' }, envelope: 'single', summary: 'Delete a subscription and its delivery log', tag: 'Webhooks' },
  { method: 'POST', path: '/v1/webhooks/{subscriptionId}/secret/rotate', field: 'rotateWebhookSecret', params: { subscriptionId: 'id' }, body: 'input', envelope: 'single', summary: 'A new signing secret; the old one signs alongside it for the grace period', tag: 'Webhooks' },
  { method: 'POST', path: '/v1/webhooks/{subscriptionId}/recover', field: 'recoverWebhook', params: { subscriptionId: 'id' }, body: 'input', envelope: 'single', summary: 'Re-send every failed delivery created since a given time', tag: 'Webhooks' },
  { method: 'GET', path: '/v1/webhook-events', field: 'webhookEvents', envelope: 'coreList', summary: 'The delivery log (subscriptionId, status, limit, offset), newest first', tag: 'Webhooks' },
  { method: 'GET', path: '/v1/webhook-events/{eventId}', field: 'webhookEvent', params: { eventId: 'id' }, envelope: 'single', summary: 'One delivery record', tag: 'Webhooks' },
  { method: 'POST', path: '/v1/webhook-events/{eventId}/resend', field: 'resendWebhookEvent', params: { eventId: 'id' }, envelope: 'single', summary: 'Attempt the delivery again now', tag: 'Webhooks' },
];
