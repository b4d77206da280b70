import { Model } from 'objection';
import type { Tier } from '../../platform/auth/permissions';

export class OrganizationModel extends Model {
  static override tableName = 'organizations';
  id!: string;
  name!: string;
  tier!: Tier;
  proAccess!: boolean;
  /** The deployment operator's own organisation (at most one): the only holder of operator permissions. */
  isOperator!: boolean;
  createdAt!: Date;
  updatedAt!: Date;
}
