/**
 * The access-tokens module's face: what other modules may use of it. Short-lived access tokens issued by keys (both hosts) and the order book's realtime authorisation.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { AccessTokenService } from './access-token.service';

export { createAccessTokensServices } from './access-tokens-services';

/** The access-tokens module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface AccessTokensServices {
  /** Short-lived access tokens issued by keys (both hosts) and the order book's realtime authorisation. */
  accessTokens: AccessTokenService;
}
