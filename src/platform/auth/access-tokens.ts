import { createHash, randomUUID } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { KeelError } from '../errors';
import { Environment, Host, KEY_ADMIN } from './permissions';
import { Principal } from './principal';

/** What an access token says: who issued it, where it is valid, what it may do, until when. */
export interface AccessTokenClaims {
  organizationId: string;
  /** The API key that issued it: revoking the key revokes the token. */
  apiKeyId: string;
  /** The key's generation when the token was issued: rotating the key (a new generation) ends the token. */
  keyGeneration: number;
  host: Host;
  environment: Environment;
  /** Core scopes or order-book permissions, never wider than the issuing key's. */
  scopes: string[];
  /** Realtime channels the token is narrowed to; null: every channel its permissions allow. */
  channels: string[] | null;
  tokenId: string;
  expiresAt: Date;
}

export type AccessTokenGrant = Omit<AccessTokenClaims, 'tokenId' | 'expiresAt'>;

const ISSUER = 'keel';
const ALGORITHM = 'HS256';
/** The HKDF label of the signing key: a key for this purpose alone, derived from KEEL_MASTER_KEY. */
export const ACCESS_TOKEN_KEY_PURPOSE = 'access-token-signing';
/** Tokens whose signature this node has checked, kept until they expire (at most this many): a repeat costs a lookup, not an HMAC. */
const VERIFIED_CACHE_ENTRIES = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function audience(host: Host, environment: Environment): string {
  return `keel:${host}:${environment}`;
}

function expired(): KeelError {
  return new KeelError('TOKEN_EXPIRED', 'The access token has expired; ask for a new one');
}

function invalid(message: string): KeelError {
  return new KeelError('INVALID_TOKEN', message);
}

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

/**
 * Short-lived bearer tokens for browsers: compact JWS (HS256) under a key derived from the master
 * key, named in the header (`kid`) by the master key's id. The current key signs; during a master
 * key rotation the previous one still verifies, so tokens outlive the switch. A token is bound to
 * one host and one environment (its audience), and names the API key that issued it.
 */
export class AccessTokenSigner {
  private readonly keys: Map<string, Uint8Array>;
  private readonly current: { id: string; key: Uint8Array };
  /** Verified tokens until they expire (dropped then), the least recently used going first past the bound. */
  private readonly verified: LRUCache<string, AccessTokenClaims>;

  /** `keys`: the current signing key first, then any still accepted (a rotation's previous key). */
  constructor(keys: readonly { id: string; key: Uint8Array }[], options: { cachedTokens?: number } = {}) {
    if (!keys.length) throw new Error('AccessTokenSigner: no signing key');
    this.current = keys[0];
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
    this.verified = new LRUCache<string, AccessTokenClaims>({ max: options.cachedTokens ?? VERIFIED_CACHE_ENTRIES, ttlAutopurge: true });
  }

  /** How many verified tokens this node holds in its cache. */
  get cachedTokens(): number {
    return this.verified.size;
  }

  async sign(grant: AccessTokenGrant, ttlSeconds: number): Promise<{ token: string; tokenId: string; expiresAt: Date }> {
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresAtSeconds = issuedAt + ttlSeconds;
    const tokenId = randomUUID();
    const token = await new SignJWT({ key: grant.apiKeyId, gen: grant.keyGeneration, scp: grant.scopes, ...(grant.channels ? { ch: grant.channels } : {}) })
      .setProtectedHeader({ alg: ALGORITHM, kid: this.current.id, typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(audience(grant.host, grant.environment))
      .setSubject(grant.organizationId)
      .setJti(tokenId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAtSeconds)
      .sign(this.current.key);
    return { token, tokenId, expiresAt: new Date(expiresAtSeconds * 1000) };
  }

  /**
   * The claims of a token presented on `host` in `environment`. Throws 401 TOKEN_EXPIRED for a
   * genuine token past its expiry, and 401 INVALID_TOKEN for anything else: malformed, signed
   * with a key this deployment does not hold, tampered with, or issued for another host or environment.
   * A token verified before is found in a bounded per-node cache (same answer, without the HMAC).
   */
  async verify(token: string, host: Host, environment: Environment): Promise<AccessTokenClaims> {
    const cacheKey = `${host}:${environment}:${token}`;
    const known = this.verified.get(cacheKey);
    if (known) {
      if (Date.now() < known.expiresAt.getTime()) return known;
      this.verified.delete(cacheKey);
      throw expired();
    }
    const claims = await this.verifyAfresh(token, host, environment);
    const ttl = claims.expiresAt.getTime() - Date.now();
    if (ttl > 0) this.verified.set(cacheKey, claims, { ttl });
    return claims;
  }

  private async verifyAfresh(token: string, host: Host, environment: Environment): Promise<AccessTokenClaims> {
    let kid: string | undefined;
    try {
      ({ kid } = decodeProtectedHeader(token));
    } catch {
      throw invalid('Malformed access token');
    }
    const key = kid === undefined ? undefined : this.keys.get(kid);
    if (!key) throw invalid('The access token is not signed by this deployment');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, { algorithms: [ALGORITHM], issuer: ISSUER, audience: audience(host, environment) }));
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw expired();
      if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud') {
        throw invalid(`The access token is not valid on the ${host} host in ${environment}`);
      }
      throw invalid('The access token is malformed or its signature does not verify');
    }
    // A token issued before keys had generations carries none: generation 0.
    const { sub, key: apiKeyId, gen = 0, scp, ch, jti, exp } = payload;
    if (typeof sub !== 'string' || !UUID.test(sub) || typeof apiKeyId !== 'string' || !UUID.test(apiKeyId) || !Number.isSafeInteger(gen) || !isStringList(scp) || (ch !== undefined && !isStringList(ch)) || typeof jti !== 'string' || typeof exp !== 'number') {
      throw invalid('Malformed access token');
    }
    return { organizationId: sub, apiKeyId, keyGeneration: gen as number, host, environment, scopes: scp, channels: ch ?? null, tokenId: jti, expiresAt: new Date(exp * 1000) };
  }
}

/**
 * The caller of a request authenticated by an access token: the issuing key's organisation, tier
 * (so its rate limit) and operator standing, with the token's scopes (those the key still grants)
 * and channels. Never KEY_ADMIN: keys are administered with a key.
 */
export class TokenPrincipal extends Principal {
  readonly expiresAt: Date;

  constructor(claims: AccessTokenClaims, issuingKey: Principal) {
    const scopes = new Set(claims.scopes.filter((scope) => issuingKey.can(scope)));
    super(claims.organizationId, claims.apiKeyId, claims.host, claims.environment, scopes, issuingKey.tier, issuingKey.operator, claims.channels ? new Set(claims.channels) : null, issuingKey.agentId, claims.keyGeneration);
    this.expiresAt = claims.expiresAt;
  }

  override can(required: string): boolean {
    return required !== KEY_ADMIN && super.can(required);
  }

  /**
   * Claimed under what the token may do (its scopes and channels): tokens alike share their claims
   * (a browser retrying with a refreshed token replays its answer), and none replays the answer of
   * its issuing key or of a token with other rights.
   */
  override claimKey(key: string): string {
    const rights = [[...this.scopes].sort().join(','), this.channels ? [...this.channels].sort().join(',') : '*'].join('|');
    return `token:${createHash('sha256').update(rights).digest('hex').slice(0, 16)}:${key}`;
  }
}
