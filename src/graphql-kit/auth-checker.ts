import { AuthChecker } from 'type-graphql';
import { KeelError } from '../platform/errors';
import { AGENT_READ, KEY_ADMIN } from '../platform/auth/permissions';
import { TokenPrincipal } from '../platform/auth/access-tokens';
import type { GraphQLContext } from './context';

/**
 * Throws 403 FORBIDDEN naming the scope (core) or permission (pro) the caller's key lacks, and
 * what it is needed for when that is narrower than the operation (`to change configurations.security`).
 */
export function requireGrant(context: Pick<GraphQLContext, 'host' | 'principal'>, need: string, purpose?: string): void {
  if (context.principal.can(need)) return;
  if (need === KEY_ADMIN) {
    if (context.principal instanceof TokenPrincipal) {
      throw KeelError.forbidden('An access token cannot create, rotate or revoke API keys; send the API key itself (apiKey and orgId headers)');
    }
    need = 'admin';
  }
  const kind = context.host === 'pro' ? 'permission' : 'scope';
  // Reading an agent's things is the agent's own key's or any read key's: an organisation key lacks 'read'.
  if (need === AGENT_READ) need = 'read';
  throw KeelError.forbidden(`This API key lacks the ${kind} '${need}'${purpose ? ` ${purpose}` : ''}`);
}

/**
 * `@Authorized('read')` on the core host, `@Authorized('orderbook_order:create')` on the pro host.
 * The same grants are checked before any argument is coerced (root-field-grants.ts); this check
 * stays for field resolvers reached any other way.
 */
export const authChecker: AuthChecker<GraphQLContext> = ({ context }, required) => {
  for (const need of required) requireGrant(context, need);
  return true;
};
