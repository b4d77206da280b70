/** The API-key vocabulary, as the service takes and returns it; the GraphQL enums of api-key.types.ts carry the same values. */
export type { Environment, Host, Tier } from '../../platform/auth/permissions';

/** ACTIVE until revoked; a revoked key never works again. */
export type ApiKeyStatus = 'ACTIVE' | 'REVOKED';
