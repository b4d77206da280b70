import { Model } from 'objection';
import type { Environment, Host, Tier } from '../../platform/auth/permissions';

export class ApiKeyModel extends Model {
  static override tableName = 'api_keys';
  id!: string;
  organizationId!: string;
  name!: string;
  host!: Host;
  environment!: Environment;
  scopes!: string[];
  tier!: Tier;
  prefix!: string;
  lastRotatedAt!: Date | null;
  /** Raised by each rotation: access tokens of an earlier generation are refused. */
  generation!: number;
  revokedAt!: Date | null;
  /** The agent this key belongs to (scope 'agent'); null for every other key. */
  agentId!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}
