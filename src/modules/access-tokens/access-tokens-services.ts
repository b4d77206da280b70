import type { Platform } from '../../platform/platform';
import { AccessTokenService, type MarketDirectory } from './access-token.service';

/** The access-tokens module's services (AccessTokensServices), built from what they use. */
export function createAccessTokensServices(platform: Pick<Platform, 'accessTokens' | 'config'>, deps: { markets: MarketDirectory }) {
  const { config } = platform;
  return { accessTokens: new AccessTokenService(platform.accessTokens, deps.markets, { defaultTtlSeconds: config.ACCESS_TOKEN_DEFAULT_TTL_SECONDS, maxTtlSeconds: config.ACCESS_TOKEN_MAX_TTL_SECONDS }) };
}
