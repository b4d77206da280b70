import type { Principal } from '../platform/auth/principal';
import type { Host } from '../platform/auth/permissions';
import type { Services } from '../services';

/** What every resolver receives: who is calling, the request id, and the domain services. */
export interface GraphQLContext {
  host: Host;
  principal: Principal;
  requestId: string;
  services: Services;
}
