import { Knex } from 'knex';

/** The columns a key is authenticated from. */
export interface KeyRow {
  id: string;
  organizationId: string;
  host: string;
  environment: string;
  scopes: string[];
  tier: string;
  revokedAt: Date | null;
  isOperator: boolean | null;
  agentId: string | null;
  generation: number;
}

/** Where the Authenticator reads keys from. */
export interface KeyReader {
  /** The key a secret belongs to, and when that secret stops working (null: until revoked or rotated). */
  bySecretHash(hash: Buffer): Promise<(KeyRow & { expiresAt: Date | null }) | undefined>;
  byId(apiKeyId: string): Promise<KeyRow | undefined>;
}

const COLUMNS = ['k.id', 'k.organization_id', 'k.host', 'k.environment', 'k.scopes', 'k.tier', 'k.revoked_at', 'k.agent_id', 'k.generation', 'o.is_operator'];

/** Keys as PostgreSQL holds them. */
export class KeyRows implements KeyReader {
  constructor(private readonly db: Knex) {}

  bySecretHash(hash: Buffer): Promise<(KeyRow & { expiresAt: Date | null }) | undefined> {
    return this.db('api_key_secrets as s')
      .join('api_keys as k', 'k.id', 's.api_key_id')
      .join('organizations as o', 'o.id', 'k.organization_id')
      .where('s.secret_hash', hash)
      .first(...COLUMNS, 's.expires_at');
  }

  byId(apiKeyId: string): Promise<KeyRow | undefined> {
    return this.db('api_keys as k')
      .join('organizations as o', 'o.id', 'k.organization_id')
      .where('k.id', apiKeyId)
      .first(...COLUMNS);
  }
}
