import type { RedisClient } from '../platform/redis';
import { withinMs } from '../platform/time-bound';

/** Apollo Server keys automatic persisted queries as `apq:<sha256 hex>` in the cache it is given. */
const APQ_KEY_PREFIX = 'apq:';
/** Longer documents are not kept: their clients send the full text each time, as without persisted queries. */
export const MAX_PERSISTED_DOCUMENT_BYTES = 64 * 1024;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface PersistedQueryOptions {
  /** Prefix of the Redis keys (REDIS_PREFIX). */
  prefix: string;
  ttlSeconds: number;
  /** Documents kept in this node's memory, most recently used first; 0: none. */
  localEntries: number;
  redisTimeoutMs: number;
}

/**
 * The document store of automatic persisted queries (Apollo's APQ protocol: a client sends the
 * SHA-256 of its document; on PERSISTED_QUERY_NOT_FOUND it sends the document once with the hash,
 * which Apollo checks, validates against the same limits as any document, and stores here).
 * Shared by every node through Redis, each entry expiring APQ_TTL_SECONDS after it was last
 * registered; a bounded in-memory LRU in front, since a hash always names the same document.
 * Redis trouble is a miss, never an error: the client then sends the full document.
 * Implements Apollo's KeyValueCache (get, set, delete).
 */
export class PersistedQueryCache {
  private readonly local = new Map<string, string>();

  constructor(
    private readonly redis: RedisClient,
    private readonly options: PersistedQueryOptions,
  ) {}

  async get(key: string): Promise<string | undefined> {
    const hit = this.local.get(key);
    if (hit !== undefined) {
      this.remember(key, hit);
      return hit;
    }
    const stored = await withinMs(this.redis.get(this.redisKey(key)), this.options.redisTimeoutMs, 'Redis').catch(() => null);
    if (typeof stored !== 'string') return undefined;
    this.remember(key, stored);
    return stored;
  }

  async set(key: string, value: string, options?: { ttl?: number | null }): Promise<void> {
    if (Buffer.byteLength(value) > MAX_PERSISTED_DOCUMENT_BYTES) return;
    this.remember(key, value);
    const ttl = options?.ttl ?? this.options.ttlSeconds;
    await withinMs(this.redis.set(this.redisKey(key), value, { EX: ttl }), this.options.redisTimeoutMs, 'Redis').catch(() => undefined);
  }

  async delete(key: string): Promise<boolean> {
    this.local.delete(key);
    await withinMs(this.redis.del(this.redisKey(key)), this.options.redisTimeoutMs, 'Redis').catch(() => undefined);
    return true;
  }

  /** The stored document of a persisted query's hash, as Apollo will find it; undefined when unknown. */
  async document(sha256Hash: unknown): Promise<string | undefined> {
    if (typeof sha256Hash !== 'string' || !SHA256_HEX.test(sha256Hash)) return undefined;
    return this.get(`${APQ_KEY_PREFIX}${sha256Hash}`);
  }

  private remember(key: string, value: string): void {
    if (this.options.localEntries === 0) return;
    this.local.delete(key);
    this.local.set(key, value);
    if (this.local.size > this.options.localEntries) this.local.delete(this.local.keys().next().value!);
  }

  private redisKey(key: string): string {
    return `${this.options.prefix}${key}`;
  }
}

/** The hash of `extensions.persistedQuery` in a GraphQL request (a JSON string over GET). */
export function persistedQueryHash(extensions: unknown): unknown {
  let value = extensions;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (value === null || typeof value !== 'object') return undefined;
  const persisted = (value as { persistedQuery?: unknown }).persistedQuery;
  return persisted !== null && typeof persisted === 'object' ? (persisted as { sha256Hash?: unknown }).sha256Hash : undefined;
}
