import { createHash } from 'node:crypto';
import type { RedisClient } from '../platform/redis';
import { withinMs } from '../platform/time-bound';
import { KeelError } from '../platform/errors';
import { BoundedCache } from '../platform/bounded-cache';

export interface PersistedQueryOptions {
  /** Prefix of the Redis keys: `<REDIS_PREFIX><host>:apq:`. */
  prefix: string;
  /** A document unused (not registered nor read from Redis) this long is gone. */
  ttlSeconds: number;
  /** Documents kept in this node's memory, most recently used first; 0: none. */
  localEntries: number;
  redisTimeoutMs: number;
  /** Longer documents, counted in raw bytes (comments and whitespace included), are not kept. */
  maxDocumentBytes: number;
  /** Per organisation: at most this many documents and this many bytes; the least recently used go first. */
  maxDocumentsPerOrganization: number;
  maxBytesPerOrganization: number;
}

/** What an organisation holds in the store. */
export interface PersistedQueryUsage {
  documents: number;
  bytes: number;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

// Per organisation, under `<prefix><organisation id>:`: `doc:<hash>` (the document, expiring after
// ttl), `lru` (sorted set: hash → last use, ms of Redis's clock), `sizes` (hash → bytes) and
// `bytes` (their sum). Every key expires after ttl, refreshed by each use.

/** KEYS: lru, sizes, bytes. ARGV: doc key prefix, hash, ttl seconds. The document (refreshed as used) or nil. */
const READ = `
local doc = redis.call('GET', ARGV[1] .. ARGV[2])
if not doc then return nil end
local t = redis.call('TIME')
redis.call('EXPIRE', ARGV[1] .. ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[1], t[1] * 1000 + math.floor(t[2] / 1000), ARGV[2])
for _, k in ipairs(KEYS) do redis.call('EXPIRE', k, ARGV[3]) end
return doc`;

/**
 * KEYS: lru, sizes, bytes. ARGV: doc key prefix, hash, document, ttl seconds, max documents, max
 * bytes. Stores the document, first forgetting the organisation's expired ones and then, least
 * recently used first, as many as it takes to stay within both quotas. Returns how many it evicted.
 */
const REGISTER = `
local lru, sizes, bytes = KEYS[1], KEYS[2], KEYS[3]
local prefix, hash, doc, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local maxDocs, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local function forget(h)
  local size = tonumber(redis.call('HGET', sizes, h) or '0')
  redis.call('DEL', prefix .. h)
  redis.call('ZREM', lru, h)
  redis.call('HDEL', sizes, h)
  if size > 0 then redis.call('DECRBY', bytes, size) end
end
for _, h in ipairs(redis.call('ZRANGEBYSCORE', lru, '-inf', now - ttl * 1000)) do forget(h) end
forget(hash)
local evicted = 0
while redis.call('ZCARD', lru) >= maxDocs or tonumber(redis.call('GET', bytes) or '0') + #doc > maxBytes do
  local oldest = redis.call('ZRANGE', lru, 0, 0)[1]
  if not oldest then break end
  forget(oldest)
  evicted = evicted + 1
end
redis.call('SET', prefix .. hash, doc, 'EX', ttl)
redis.call('ZADD', lru, now, hash)
redis.call('HSET', sizes, hash, #doc)
redis.call('INCRBY', bytes, #doc)
for _, k in ipairs(KEYS) do redis.call('EXPIRE', k, ttl) end
return evicted`;

/**
 * The documents of automatic persisted queries (Apollo's APQ protocol: a client sends the SHA-256 of
 * its document; on PERSISTED_QUERY_NOT_FOUND it sends the document once with the hash, which is
 * checked, validated like any document and then registered here). Each organisation has its own
 * documents in Redis, shared by every node, within quotas of count and bytes: registering past them
 * evicts the organisation's least recently used documents, never another's, so no key, however
 * narrow, can grow Redis past organisations × APQ_MAX_BYTES_PER_ORGANIZATION. A bounded
 * in-memory LRU sits in front (a hash always names the same document). Redis trouble is a miss,
 * never an error: the client then sends the full document.
 */
export class PersistedQueryStore {
  /** Each document weighs its bytes: at most localEntries of at most maxDocumentBytes. */
  private readonly local: BoundedCache<string>;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: PersistedQueryOptions,
  ) {
    this.local = new BoundedCache({ maxEntries: options.localEntries, maxBytes: options.localEntries * options.maxDocumentBytes });
  }

  /** The organisation's document for a hash, or undefined when it has none (or Redis does not answer). */
  async document(organizationId: string, hash: string): Promise<string | undefined> {
    const localKey = `${organizationId}:${hash}`;
    const hit = this.local.get(localKey);
    if (hit !== undefined) return hit;
    const stored = await this.run(READ, organizationId, [hash, String(this.options.ttlSeconds)]).catch(() => null);
    if (typeof stored !== 'string') return undefined;
    this.local.set(localKey, stored, Buffer.byteLength(stored));
    return stored;
  }

  /** Keeps the organisation's document under its hash; false when it is over the size cap (or Redis does not answer). */
  async register(organizationId: string, hash: string, document: string): Promise<boolean> {
    const bytes = Buffer.byteLength(document);
    if (bytes > this.options.maxDocumentBytes || bytes > this.options.maxBytesPerOrganization) return false;
    const { ttlSeconds, maxDocumentsPerOrganization, maxBytesPerOrganization } = this.options;
    const args = [hash, document, String(ttlSeconds), String(maxDocumentsPerOrganization), String(maxBytesPerOrganization)];
    const stored = await this.run(REGISTER, organizationId, args).then(
      () => true,
      () => false,
    );
    if (stored) this.local.set(`${organizationId}:${hash}`, document, bytes);
    return stored;
  }

  /** How many documents and bytes the organisation holds in Redis. */
  async usage(organizationId: string): Promise<PersistedQueryUsage> {
    const [lru, , bytes] = this.keys(organizationId);
    const [documents, total] = await Promise.all([this.redis.zCard(lru), this.redis.get(bytes)]);
    return { documents, bytes: Number(total ?? 0) };
  }

  private run(script: string, organizationId: string, args: string[]): Promise<unknown> {
    const call = this.redis.eval(script, { keys: this.keys(organizationId), arguments: [`${this.orgPrefix(organizationId)}doc:`, ...args] });
    return withinMs(call, this.options.redisTimeoutMs, 'Redis');
  }

  private orgPrefix(organizationId: string): string {
    return `${this.options.prefix}${organizationId}:`;
  }

  private keys(organizationId: string): [string, string, string] {
    const p = this.orgPrefix(organizationId);
    return [`${p}lru`, `${p}sizes`, `${p}bytes`];
  }
}

/** A GraphQL request's parameters, from the JSON body (POST) or the query string (GET). */
export interface GraphQLParams {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: unknown;
}

/** What a request's `extensions.persistedQuery` asks: to run the document of `hash`, or to register `document` under it. */
export type PersistedQueryAsk = { hash: string; document?: string };

/**
 * The persisted query a request asks for, checked as Apollo checks it; undefined when it names
 * none. 400 BAD_REQUEST for a version other than 1, a hash that is no SHA-256, or a document that
 * is not the hash's.
 */
export function persistedQueryAsk(params: GraphQLParams | undefined): PersistedQueryAsk | undefined {
  const persisted = extensionsOf(params?.extensions)?.persistedQuery;
  if (persisted === undefined) return undefined;
  const { version, sha256Hash } = (persisted ?? {}) as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1) throw new KeelError('BAD_REQUEST', 'Unsupported persisted query version');
  if (typeof sha256Hash !== 'string' || !SHA256_HEX.test(sha256Hash)) throw new KeelError('BAD_REQUEST', 'persistedQuery.sha256Hash must be a SHA-256 in lower-case hex');
  if (typeof params?.query !== 'string') return { hash: sha256Hash };
  if (createHash('sha256').update(params.query).digest('hex') !== sha256Hash) throw new KeelError('BAD_REQUEST', 'provided sha does not match query');
  return { hash: sha256Hash, document: params.query };
}

/** The extensions without `persistedQuery`, in the form they came (a JSON string over GET); undefined when nothing is left. */
export function withoutPersistedQuery(extensions: unknown): unknown {
  const parsed = extensionsOf(extensions);
  if (!parsed) return extensions;
  const { persistedQuery: _resolved, ...rest } = parsed;
  if (!Object.keys(rest).length) return undefined;
  return typeof extensions === 'string' ? JSON.stringify(rest) : rest;
}

function extensionsOf(value: unknown): Record<string, unknown> | undefined {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
