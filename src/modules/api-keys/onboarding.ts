import type { Knex } from 'knex';
import type { Tier } from '../../platform/auth/permissions';
import { PRO_TRADE_PERMISSIONS } from '../../platform/auth/permissions';
import type { OrganizationService } from '../organizations';
import type { ApiKeyService } from './api-key.service';

/** The two services that make an organisation and issue its keys. */
export interface KeyIssuers {
  organizations: OrganizationService;
  apiKeys: ApiKeyService;
}

export interface OnboardedOrganization {
  orgId: string;
  name: string;
  tier: Tier;
  adminKey: string;
  proKey?: string;
}

/**
 * The operator's `keel org create`: an organisation and its first keys, in one transaction. Its
 * order-book key trades; managing markets is the operator's (operator-key.ts).
 */
export async function onboardOrganization(db: Knex, services: KeyIssuers, input: { name: string; tier: Tier; proAccess: boolean }): Promise<OnboardedOrganization> {
  return db.transaction(async (trx) => {
    const org = await services.organizations.create(input, trx);
    const issue = (name: string, host: 'core' | 'pro', scopes: string[]) =>
      services.apiKeys.issue({ organizationId: org.id, name, host, scopes, tier: org.tier }, trx).then((k) => k.secret);
    const adminKey = await issue('admin', 'core', ['admin']);
    const result: OnboardedOrganization = { orgId: org.id, name: org.name, tier: org.tier, adminKey };
    if (input.proAccess) {
      result.proKey = await issue('trading', 'pro', PRO_TRADE_PERMISSIONS);
    }
    return result;
  });
}
