import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { Tier } from '../../platform/auth/permissions';
import { OrganizationModel } from './organization.model';

const OPERATOR_NAME = 'Keel operator';

export class OrganizationService {
  constructor(private readonly db: Knex) {}

  async create(input: { name: string; tier: Tier; proAccess: boolean }, trx?: Knex.Transaction): Promise<OrganizationModel> {
    const name = input.name.trim();
    if (!name || name.length > 200) throw KeelError.invalidField('name', 'must be 1 to 200 characters');
    return OrganizationModel.query(trx ?? this.db).insertAndFetch({ name, tier: input.tier, proAccess: input.proAccess });
  }

  async get(id: string, trx?: Knex.Transaction): Promise<OrganizationModel> {
    const org = await OrganizationModel.query(trx ?? this.db).findById(id);
    if (!org) throw KeelError.notFound('Organisation');
    return org;
  }

  /** The operator's organisation, created on first use (a partial unique index keeps it single). */
  async operator(): Promise<OrganizationModel> {
    await this.db.raw(`INSERT INTO organizations (name, tier, pro_access, is_operator) VALUES (?, 'Business', true, true) ON CONFLICT ((true)) WHERE is_operator DO NOTHING`, [OPERATOR_NAME]);
    return (await OrganizationModel.query(this.db).findOne({ isOperator: true }))!;
  }

  async setProAccess(id: string, proAccess: boolean): Promise<OrganizationModel> {
    const org = await OrganizationModel.query(this.db).patchAndFetchById(id, { proAccess, updatedAt: new Date() });
    if (!org) throw KeelError.notFound('Organisation');
    return org;
  }
}
