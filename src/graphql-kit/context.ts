import type { Principal } from '../platform/auth/principal';
import type { Host } from '../platform/auth/permissions';

/**
 * The domain services a resolver reaches through its context. The kit names the slot and knows no
 * module: the composition root fills it (`declare module` in services.ts), so resolvers see every
 * service typed while no module imports the root that builds them.
 */
export interface ResolverServices {}

/** What every resolver receives: who is calling, the request id, and the domain services. */
export interface GraphQLContext {
  host: Host;
  principal: Principal;
  requestId: string;
  services: ResolverServices;
}
