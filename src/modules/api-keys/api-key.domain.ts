/** The API-key vocabulary, as the service takes and returns it; the GraphQL enums of api-key.types.ts carry the same values. */
export type { Environment, Host, Tier } from '../../platform/auth/permissions';

/** ACTIVE until revoked; a revoked key never works again. */
export const ApiKeyStatus = {
  ACTIVE: 'ACTIVE',
  REVOKED: 'REVOKED',
} as const;
export type ApiKeyStatus = (typeof ApiKeyStatus)[keyof typeof ApiKeyStatus];

/** The host a key is valid on (the platform's Host, named for GraphQL). */
export const ApiKeyHost = {
  CORE: 'core',
  PRO: 'pro',
} as const;
export type ApiKeyHost = (typeof ApiKeyHost)[keyof typeof ApiKeyHost];
