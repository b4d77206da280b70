import { Model } from 'objection';
import type { Tier } from '../../platform/auth/permissions';

export class OrganizationModel extends Model {
  static override tableName = 'organizations';
  id!: string;
  name!: string;
  tier!: Tier;
  proAccess!: boolean;
  createdAt!: Date;
  updatedAt!: Date;
}
