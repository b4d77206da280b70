import { OPERATOR_KEY_PERMISSIONS } from '../../platform/auth/permissions';
import type { KeyIssuers } from './onboarding';

export interface OperatorKey {
  orgId: string;
  key: string;
}

/**
 * `keel operator key create`: a pro-host key of the operator's organisation (created on first use),
 * the only kind of key that may manage markets over the API. Only the operator's CLI mints one.
 */
export async function issueOperatorKey(services: KeyIssuers): Promise<OperatorKey> {
  const operator = await services.organizations.operator();
  const issued = await services.apiKeys.issue({ organizationId: operator.id, name: 'operator', host: 'pro', scopes: OPERATOR_KEY_PERMISSIONS, tier: operator.tier });
  return { orgId: operator.id, key: issued.secret };
}
