import type { Principal } from '../platform/auth/principal';
import type { Host } from '../platform/auth/permissions';

/**
 * What every resolver receives: who is calling, the request id, and the domain services it uses.
 * `S` is the resolver's own list of services (each resolver file's `*ResolverServices`, named from
 * the modules' faces): the kit knows no module, and a resolver sees only what it names. The
 * composition root (src/services.ts) checks that the services it wires provide every resolver's list.
 */
export interface GraphQLContext<S extends object = object> {
  host: Host;
  principal: Principal;
  requestId: string;
  services: S;
}
