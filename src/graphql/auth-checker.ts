import { AuthChecker } from 'type-graphql';
import { KeelError } from '../platform/errors';
import type { GraphQLContext } from './context';

/**
 * `@Authorized('read')` on the core host, `@Authorized('orderbook_order:create')` on the pro host.
 * A missing grant is a 403 whose message names what is missing.
 */
export const authChecker: AuthChecker<GraphQLContext> = ({ context }, required) => {
  for (const need of required) {
    if (!context.principal.can(need)) {
      const kind = context.host === 'pro' ? 'permission' : 'scope';
      throw KeelError.forbidden(`This API key lacks the ${kind} '${need}'`);
    }
  }
  return true;
};
