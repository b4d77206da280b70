import { LRUCache } from 'lru-cache';
import { KeelError } from '../errors';
import { hashApiKey, parseApiKey } from './api-key-secret';
import { Environment, Host, Tier } from './permissions';
import { Principal } from './principal';
import type { RedisClient } from '../redis';
import { RedisChannel } from '../redis-channel';
import { withinMs } from '../time-bound';
import { AccessTokenSigner, TokenPrincipal } from './access-tokens';
import { KeyReader, KeyRow } from './key-rows';

interface CachedKey {
  principal: Principal;
  revokedAt: Date | null;
  secretExpiresAt: Date | null;
  cachedUntil: number;
}

export interface Credentials {
  apiKey?: string;
  orgId?: string;
  /** An access token (`Authorization: Bearer`, or the graphql-ws connection parameter `token`) instead of apiKey. */
  token?: string;
}

/** A valid key's principal and when the presented secret or token stops working (null: until revoked or rotated). */
export interface KeySession {
  principal: Principal;
  secretExpiresAt: Date | null;
}

/** An apiKey header that passed the checks of form: its hash and the organisation it claims. */
interface PresentedKey {
  hash: Buffer;
  cacheKey: string;
  orgId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How many keys (presented secrets, and issuing keys of access tokens) a node keeps in its cache. */
const CACHED_KEYS = 10_000;

/**
 * Resolves credentials to a Principal. Lookups are cached per node for a few seconds; a
 * revocation or rotation broadcasts on Redis so every node drops the key at once. The cache is
 * bounded (lru-cache): an entry is dropped when it expires, and past `cachedKeys` entries the least
 * recently used goes first (read again when next presented).
 */
export class Authenticator {
  private readonly cache: LRUCache<string, CachedKey>;
  private invalidations?: RedisChannel;
  private readonly invalidationListeners = new Set<(keyId: string) => void>();
  /** How many times `forget` ran: a read that saw it change may predate a revocation or rotation. */
  private forgets = 0;

  constructor(
    private readonly keys: KeyReader,
    private readonly environment: Environment,
    private readonly cacheTtlMs: number,
    private readonly channel: string,
    private readonly redisTimeoutMs: number,
    /** Verifies access tokens; without it a token is refused as INVALID_TOKEN. */
    private readonly tokens?: AccessTokenSigner,
    maxCachedKeys = CACHED_KEYS,
  ) {
    this.cache = new LRUCache<string, CachedKey>({ max: maxCachedKeys, ttl: Math.max(1, cacheTtlMs), ttlAutopurge: true });
  }

  /** How many keys this node holds in its cache. */
  get cachedKeys(): number {
    return this.cache.size;
  }

  async listen(redis: RedisClient): Promise<void> {
    this.invalidations = new RedisChannel(redis, this.channel);
    await this.invalidations.listen((keyId) => {
      this.forget(keyId);
      for (const listener of this.invalidationListeners) listener(keyId);
    });
  }

  /** Calls `listener` with the key's id whenever any node revokes or rotates a key; returns the unsubscribe. */
  onInvalidate(listener: (keyId: string) => void): () => void {
    this.invalidationListeners.add(listener);
    return () => this.invalidationListeners.delete(listener);
  }

  async close(): Promise<void> {
    await this.invalidations?.close();
  }

  /** Drops a key from this node's cache; call `announce` to reach the other nodes. */
  forget(keyId: string): void {
    this.forgets++;
    for (const [hash, entry] of [...this.cache.entries()]) if (entry.principal.apiKeyId === keyId) this.cache.delete(hash);
  }

  /**
   * Best effort: with Redis unreachable the other nodes cannot be told, and drop the key when their
   * cache entry expires (AUTH_CACHE_TTL_MS); the change itself is already committed in PostgreSQL.
   */
  async announce(redis: RedisClient, keyId: string): Promise<void> {
    this.forget(keyId);
    await withinMs(redis.publish(this.channel, keyId), this.redisTimeoutMs, 'Redis').catch(() => undefined);
  }

  async authenticate(host: Host, credentials: Credentials): Promise<Principal> {
    return (await this.session(host, credentials)).principal;
  }

  /**
   * `authenticate`, answered synchronously (no promise, no microtask) when the key's entry in this
   * node's cache is fresh; otherwise the promise of the lookup. A refusal is thrown, or rejected
   * when the lookup ran. The cache and its invalidation are the same as `authenticate`'s.
   */
  principalFor(host: Host, credentials: Credentials): Principal | Promise<Principal> {
    if (credentials.token !== undefined) return this.authenticate(host, credentials);
    const presented = this.presentedKey(host, credentials);
    const cached = this.freshEntry(presented.cacheKey);
    if (cached) return this.keySession(cached, presented.orgId).principal;
    return this.loadKey(presented).then((entry) => this.keySession(entry, presented.orgId).principal);
  }

  /** Like `authenticate`, and also tells when the presented secret expires (for long-lived connections). */
  async session(host: Host, credentials: Credentials): Promise<KeySession> {
    if (credentials.token !== undefined) {
      if (credentials.apiKey !== undefined) throw KeelError.unauthorized('Send either an apiKey or a bearer token, not both');
      return this.tokenSession(host, credentials.token, credentials.orgId);
    }
    const presented = this.presentedKey(host, credentials);
    return this.keySession(this.freshEntry(presented.cacheKey) ?? (await this.loadKey(presented)), presented.orgId);
  }

  /** The apiKey and orgId headers checked for form, and the key's hash (its cache key). */
  private presentedKey(host: Host, { apiKey, orgId }: Credentials): PresentedKey {
    if (!apiKey || !orgId) throw KeelError.unauthorized('Missing apiKey or orgId header');
    const parsed = parseApiKey(apiKey);
    if (!parsed) throw KeelError.unauthorized('Invalid API key');
    if (parsed.host !== host) throw KeelError.unauthorized(`This key is not valid on the ${host} host`);
    if (parsed.environment !== this.environment) {
      throw KeelError.unauthorized(`A ${parsed.environment} key cannot be used in the ${this.environment} environment`);
    }
    if (!UUID.test(orgId)) throw KeelError.unauthorized('Invalid organisation id');
    const hash = hashApiKey(apiKey);
    return { hash, cacheKey: hash.toString('base64'), orgId };
  }

  private freshEntry(cacheKey: string): CachedKey | undefined {
    const entry = this.cache.get(cacheKey);
    return entry && entry.cachedUntil >= Date.now() ? entry : undefined;
  }

  private async loadKey({ hash, cacheKey }: PresentedKey): Promise<CachedKey | undefined> {
    return this.read(cacheKey, async () => {
      const row = await this.keys.bySecretHash(hash);
      return row && this.cached(row, row.expiresAt);
    });
  }

  /**
   * Reads a key into the cache (or drops it from the cache when it is gone). A read during which any
   * key was forgotten answers only the request that made it: it may have seen the row before that
   * revocation or rotation committed, and cached it would outlive the `forget` meant to drop it.
   */
  private async read(cacheKey: string, lookup: () => Promise<CachedKey | undefined>): Promise<CachedKey | undefined> {
    const forgets = this.forgets;
    const entry = await lookup();
    if (!entry) this.cache.delete(cacheKey);
    else if (forgets === this.forgets) this.cache.set(cacheKey, entry);
    return entry;
  }

  /** The verdict on a presented key: its session, or 401 saying why not. */
  private keySession(entry: CachedKey | undefined, orgId: string): KeySession {
    if (!entry) throw KeelError.unauthorized('Invalid API key');
    if (entry.revokedAt) throw KeelError.unauthorized('This API key has been revoked');
    if (entry.secretExpiresAt && entry.secretExpiresAt.getTime() <= Date.now()) {
      throw KeelError.unauthorized('This API key was rotated and its grace period has ended');
    }
    if (entry.principal.organizationId !== orgId.toLowerCase()) throw KeelError.unauthorized('Invalid API key for this organisation');
    return { principal: entry.principal, secretExpiresAt: entry.secretExpiresAt };
  }

  /**
   * An access token's session: the token verifies (signature, host, environment, expiry), and the
   * key that issued it is live and not rotated since (the token's generation), read through the same
   * cache as keys, so a revocation or rotation anywhere ends the key's tokens as its broadcast
   * reaches each node. 401 INVALID_TOKEN otherwise, TOKEN_EXPIRED once it expired.
   */
  private async tokenSession(host: Host, token: string, orgId: string | undefined): Promise<KeySession> {
    if (!this.tokens) throw new KeelError('INVALID_TOKEN', 'Access tokens are not accepted here');
    const claims = await this.tokens.verify(token, host, this.environment);
    if (orgId !== undefined && orgId.toLowerCase() !== claims.organizationId) throw new KeelError('INVALID_TOKEN', 'The access token is for another organisation');
    const cacheKey = `key:${claims.apiKeyId}`;
    const entry = this.freshEntry(cacheKey) ?? (await this.read(cacheKey, async () => {
      const row = await this.keys.byId(claims.apiKeyId);
      return row && this.cached(row, null);
    }));
    if (!entry || entry.principal.organizationId !== claims.organizationId || entry.principal.host !== host) {
      throw new KeelError('INVALID_TOKEN', 'The API key that issued this access token does not exist');
    }
    if (entry.revokedAt) throw new KeelError('INVALID_TOKEN', 'The API key that issued this access token has been revoked');
    // Lower only: a node whose cache missed the rotation's broadcast still takes the new generation's tokens.
    if (claims.keyGeneration < entry.principal.keyGeneration) {
      throw new KeelError('INVALID_TOKEN', 'The API key that issued this access token has been rotated since; ask for a new token');
    }
    return { principal: new TokenPrincipal(claims, entry.principal), secretExpiresAt: claims.expiresAt };
  }

  private cached(row: KeyRow, secretExpiresAt: Date | null): CachedKey {
    return {
      principal: new Principal(row.organizationId, row.id, row.host as Host, row.environment as Environment, new Set(row.scopes), row.tier as Tier, row.isOperator === true, null, row.agentId ?? null, row.generation, secretExpiresAt),
      revokedAt: row.revokedAt,
      secretExpiresAt,
      cachedUntil: Date.now() + this.cacheTtlMs,
    };
  }
}
