import { z } from 'zod';
import { parseTrustProxy } from './client-address';
import { parseTierQuotas } from './quota/tier-quotas';

/** `https://app.example.com` or `http://localhost:3000`: what a browser sends as Origin. */
function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}

/**
 * Every environment variable Keel reads, validated once at start-up.
 * The configuration reference in docs/operating-keel.md is written from this schema; keep them in step.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
/** A percentage below 100 with at most 2 decimals ("3", "0.5"), kept a string (percentBasisPoints reads it). */
const percent = z.string().regex(/^\d{1,2}(\.\d{1,2})?$/, 'a percentage below 100 with at most 2 decimals');

export const configSchema = z.object({
  KEEL_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
  DATABASE_URL: z.string().default('postgres://postgres@127.0.0.1:5432/keel'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().default('keel:'),
  HOST: z.string().default('0.0.0.0'),
  CORE_PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  PRO_PORT: z.coerce.number().int().min(0).max(65535).default(4001),
  KEEL_ROLES: z.string().default('api,orderbook,worker'),
  KEEL_DATA_DIR: z.string().default('.keel'),
  /** This node's name in the order-book cluster (shard leases, NOT_LEADER details, engine status); unset: the id kept in `<KEEL_DATA_DIR>/node-id` (platform/node-identity.ts). Held by one live process at a time. */
  KEEL_NODE_ID: z.string().min(1).max(200).optional(),
  /** Markets map to this many shards (a stable FNV-1a hash of the market symbol), unless ORDERBOOK_SHARD_MAP names the market. */
  ORDERBOOK_SHARDS: z.coerce.number().int().min(1).max(1024).default(16),
  /** Explicit placements that override the hash: `ETH-USDC=0,BTC-USDC=1`. */
  ORDERBOOK_SHARD_MAP: z
    .string()
    .default('')
    .transform((text, ctx) => {
      const map: Record<string, number> = {};
      for (const entry of text.split(',').map((e) => e.trim()).filter(Boolean)) {
        const [symbol, shard] = entry.split('=').map((x) => x.trim());
        const n = Number(shard);
        if (!symbol || !Number.isInteger(n) || n < 0) ctx.addIssue({ code: 'custom', message: `'${entry}': expected SYMBOL=shard (a non-negative integer)` });
        else map[symbol.toUpperCase()] = n;
      }
      return map;
    }),
  /** The shards this node competes for: `all`, `none`, or a comma-separated list of shard numbers. */
  ORDERBOOK_LEAD_SHARDS: z.string().default('all'),
  /** Of those, the ones this node takes as soon as they are free (`all`, `none` or a list); it takes the others only after seeing them free on two rounds running, so a layout can spread shards over nodes and still fail over. */
  ORDERBOOK_PREFERRED_SHARDS: z.string().default('all'),
  /** A shard leader's lease in Redis lives this long unless renewed (the spec's "about 5 seconds"). */
  ORDERBOOK_LEASE_TTL_MS: z.coerce.number().int().min(300).default(5_000),
  /** How often leases are renewed and free shards competed for; unset: a third of the TTL. */
  ORDERBOOK_LEASE_RENEW_MS: z.coerce.number().int().positive().optional(),
  /** A leader stops accepting orders this long before its lease could expire (since its last successful renewal); unset: a fifth of the TTL. */
  ORDERBOOK_LEASE_MARGIN_MS: z.coerce.number().int().min(0).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(1_048_576),
  /** How deep objects and arrays may nest in a request's body (GraphQL variables included) and in a GraphQL document's object and list values; deeper is refused (422, 400 in a document) before it could exhaust the call stack of the code that copies a value for a write. */
  BODY_MAX_DEPTH: z.coerce.number().int().min(2).default(32),
  API_KEY_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).default(86_400),
  IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().positive().default(86_400),
  IDEMPOTENCY_LOCK_SECONDS: z.coerce.number().int().positive().default(60),
  IDEMPOTENCY_PURGE_INTERVAL_MS: z.coerce.number().int().positive().default(600_000),
  /** Test hook, sandbox only: `after-commit:<unit of work>,…` kills the process right after that work commits. */
  KEEL_FAILPOINTS: z.string().default(''),
  RATE_LIMIT_SCALE: z.coerce.number().positive().default(1),
  /** Monthly request quotas per tier, `Tier=requests,…`; tiers not named keep their default (platform/quota/tier-quotas.ts). */
  MONTHLY_QUOTAS: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return parseTierQuotas(text);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return parseTierQuotas('');
      }
    }),
  /** How often each node writes the requests it counted to PostgreSQL (the usage record a lost Redis count is seeded from). */
  QUOTA_FLUSH_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  /** How long an organisation's quota is kept in Redis before it is read again from PostgreSQL (a changed tier default reaches every node within it). */
  QUOTA_LIMIT_CACHE_SECONDS: z.coerce.number().int().positive().default(60),
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5_000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  DB_POOL_MAX: z.coerce.number().int().positive().default(20),
  /** A request waiting longer than this for a PostgreSQL connection gets 503 SERVICE_UNAVAILABLE. */
  DB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().positive().default(800),
  /** A Redis command (rate limit, queue add, readiness ping) unanswered after this counts as Redis down. */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().positive().default(250),
  /** `keel start` gives up on an unreachable PostgreSQL or Redis after this. */
  STARTUP_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().default(4_000),
  /** A request (headers and body received, answer sent) taking longer is cut off with 408/closed. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /** A client must send its complete request headers within this. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** Named prepared statements; turn off behind a pooler that does not keep them (PgBouncer transaction mode before 1.21). */
  DB_PREPARED_STATEMENTS: bool.default(true),
  /** Unset: on in sandbox, off in production (see loadConfig). */
  GRAPHQL_INTROSPECTION: bool.optional(),
  /** The GraphQL explorer (GraphiQL) for browsers at GET /graphql. Unset: on in sandbox, off in production (see loadConfig). */
  GRAPHQL_EXPLORER: bool.optional(),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().positive().default(10),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(30),
  GRAPHQL_MAX_COST: z.coerce.number().int().positive().default(5_000),
  WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: z.coerce.number().int().positive().default(20),
  /** graphql-ws connections one API key (with the tokens it issued) may hold open on a node, per host; one more is closed 4429. */
  WS_MAX_CONNECTIONS_PER_KEY: z.coerce.number().int().positive().default(100),
  /** graphql-ws connections one organisation (all its keys) may hold open on a node, per host; one more is closed 4429. */
  WS_MAX_CONNECTIONS_PER_ORGANIZATION: z.coerce.number().int().positive().default(500),
  /** A subscription whose undelivered messages exceed this is a slow consumer: its connection is closed 4008. */
  WS_MAX_QUEUED_MESSAGES: z.coerce.number().int().positive().default(1_000),
  /** A connection whose socket holds more unsent bytes than this is a slow consumer: closed 4008. */
  WS_MAX_BUFFERED_BYTES: z.coerce.number().int().positive().default(4_194_304),
  WEBHOOKS_ALLOW_PRIVATE_URLS: bool.default(false),
  /** Lets the recoverable-assets call read through a caller's rpcUrl on loopback or a private network. */
  RECOVERY_RPC_ALLOW_PRIVATE_URLS: bool.default(false),
  WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .default('0,5000,30000,300000,1800000,3600000,7200000,21600000')
    .transform((text, ctx) => {
      const delays = text.split(',').map((part) => Number(part.trim()));
      if (!delays.length || delays.some((d) => !Number.isInteger(d) || d < 0)) {
        ctx.addIssue({ code: 'custom', message: 'a comma-separated list of non-negative integers (milliseconds)' });
      }
      return delays;
    }),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().positive().default(8),
  WEBHOOK_LEASE_MS: z.coerce.number().int().positive().default(15_000),
  WEBHOOK_SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  WEBHOOK_DEACTIVATE_AFTER_SECONDS: z.coerce.number().int().positive().default(5 * 86_400),
  WEBHOOK_SECRET_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).default(86_400),
  /** Active webhook subscriptions an organisation may have: each event becomes one delivery per subscription inside the shared outbox relay's transaction. */
  WEBHOOK_MAX_ACTIVE_SUBSCRIPTIONS: z.coerce.number().int().positive().default(50),
  OUTBOX_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(50),
  OUTBOX_LISTENING_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  /** JSON array of chains (see chain-config.ts); unset in sandbox: Keel runs its own dev chains. */
  KEEL_CHAINS: z.string().optional(),
  DEV_CHAIN_IDS: z
    .string()
    .default('31337,31338')
    .transform((text, ctx) => {
      const ids = text.split(',').map((part) => Number(part.trim()));
      if (!ids.length || ids.some((id) => !Number.isSafeInteger(id) || id <= 0) || new Set(ids).size !== ids.length) {
        ctx.addIssue({ code: 'custom', message: 'a comma-separated list of distinct positive chain ids' });
      }
      return ids;
    }),
  /** The first dev chain listens here, the next on the port after it; 0: ports the OS picks. */
  DEV_CHAIN_PORT: z.coerce.number().int().min(0).max(65535).default(8545),
  DEV_CHAIN_BLOCK_INTERVAL_MS: z.coerce.number().int().min(0).default(1_000),
  DEV_CHAIN_CONFIRMATIONS: z.coerce.number().int().min(1).default(2),
  /** In sandbox without KEEL_CHAINS, Keel also starts its sandbox Solana network (LiteSVM, docs/solana.md). */
  DEV_SOLANA: bool.default(true),
  /** Its JSON-RPC port; unset: 8899, or a port the OS picks when DEV_CHAIN_PORT is 0. */
  DEV_SOLANA_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** How long a slot lasts on it. */
  DEV_SOLANA_SLOT_MS: z.coerce.number().int().min(10).default(400),
  /** Blocks between its head and `finalized` (Solana's is 32). */
  DEV_SOLANA_FINALIZED_LAG: z.coerce.number().int().min(1).max(512).default(32),
  /** 32 bytes, hex or base64: the key-encryption key for wallet secrets. */
  KEEL_MASTER_KEY: z.string().optional(),
  /** During a key rotation: the key being retired; secrets sealed under it still open until `keel secrets reseal`. */
  KEEL_MASTER_KEY_PREVIOUS: z.string().optional(),
  /** Set: /metrics answers only requests with `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** Browser origins (`scheme://host[:port]`, comma-separated) allowed to call both hosts; none by default. */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((text, ctx) => {
      const origins = text.split(',').map((part) => part.trim()).filter(Boolean);
      for (const origin of origins) {
        if (!isOrigin(origin)) ctx.addIssue({ code: 'custom', message: `'${origin}' is not an origin (scheme://host[:port], no path)` });
      }
      return origins;
    }),
  /** Lifetime of an access token when its issuer names none. */
  ACCESS_TOKEN_DEFAULT_TTL_SECONDS: z.coerce.number().int().positive().default(900),
  /** Longest lifetime an access token may be issued with. */
  ACCESS_TOKEN_MAX_TTL_SECONDS: z.coerce.number().int().positive().default(3_600),
  /** How long a persisted query's document is kept in Redis after it was last registered or read there. */
  APQ_TTL_SECONDS: z.coerce.number().int().positive().default(86_400),
  /** A longer persisted-query document (raw bytes: comments and whitespace count) is run but not kept. */
  APQ_MAX_DOCUMENT_BYTES: z.coerce.number().int().positive().default(16 * 1024),
  /** Each organisation's persisted queries, per host: at most this many documents… */
  APQ_MAX_DOCUMENTS_PER_ORGANIZATION: z.coerce.number().int().positive().default(500),
  /** …and this many bytes; past either, its least recently used documents are evicted. */
  APQ_MAX_BYTES_PER_ORGANIZATION: z.coerce.number().int().positive().default(1024 * 1024),
  /** Persisted-query documents each node keeps in memory in front of Redis (most recently used). */
  APQ_LOCAL_ENTRIES: z.coerce.number().int().min(0).default(1_000),
  CHAIN_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(500),
  /** How long one JSON-RPC request to an EVM node may take before it counts as not answered (tried again later). */
  CHAIN_RPC_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  /** Blocks read per watcher step. */
  CHAIN_SCAN_BATCH_BLOCKS: z.coerce.number().int().positive().max(2_000).default(100),
  /** How many recent block hashes the watcher keeps to find where a reorg forked. */
  CHAIN_REORG_WINDOW_BLOCKS: z.coerce.number().int().min(8).default(256),
  /** How often the transaction sender signs queued transfers and checks sent ones. */
  TRANSFER_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(500),
  /** A sent transaction still unmined after this long, and priced below the market, is re-sent with a higher fee. */
  TRANSFER_FEE_BUMP_AFTER_MS: z.coerce.number().int().positive().default(30_000),
  /** Each re-send raises both fee caps by at least this much (nodes require 10% to replace). */
  TRANSFER_FEE_BUMP_PERCENT: z.coerce.number().int().min(10).max(500).default(25),
  /** Sanctions lists: how often each process checks PostgreSQL for a list loaded with `keel aml load`. */
  SANCTIONS_REFRESH_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
  /** USD reference prices the operator states, a JSON object: {"ETH":"3000","WBTC":"97000"}. A reference pins the symbol's price. */
  PRICE_REFERENCES: z.string().default(''),
  /** USD stablecoins: at par (1) unless PRICE_REFERENCES says otherwise; order-book markets quoted in them price their base asset. */
  PRICE_STABLECOINS: z.string().default('USDC,USDT,DAI'),
  /** A price is served from cache for at most this long. */
  PRICE_CACHE_SECONDS: z.coerce.number().int().min(0).default(30),
  /** An order-book trade older than this no longer prices its base asset (then the price is unavailable). */
  PRICE_TRADE_MAX_AGE_SECONDS: z.coerce.number().int().positive().default(86_400),
  /** Policy prices (agent USD limits, settlement-rule swaps): the window of order-book trades they are taken from. */
  PRICE_POLICY_WINDOW_SECONDS: z.coerce.number().int().positive().default(3_600),
  /** Policy prices: distinct organisations the counted trades must come from (self-trades never count). */
  PRICE_POLICY_MIN_ORGANIZATIONS: z.coerce.number().int().min(2).max(100).default(3),
  /** Policy prices: how far (percent, up to 2 decimals) a trade may lie from the reference and still count. */
  PRICE_POLICY_MAX_DEVIATION_PERCENT: percent.default('10'),
  /** How long a checkout (a payment link session or a payment intent) waits for its payment. */
  CHECKOUT_TTL_SECONDS: z.coerce.number().int().min(30).max(7 * 86_400).default(900),
  /** Confirmations a payment needs before it counts as paid (at least the chain's own count). */
  PAYMENT_CONFIRMATIONS: z.coerce.number().int().min(1).max(1_000).default(3),
  /** How often the checkout watcher looks at open checkouts (detection at the head, confirmations, expiry). */
  CHECKOUT_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /** The public base URL of the core host, for payment links' checkoutUrl (`<url>/pay/<slug>`); empty: the path alone. */
  CHECKOUT_PUBLIC_URL: z.string().default(''),
  /** The public checkout API and page: requests per client address (an IPv6 client: per /64) per minute. */
  CHECKOUT_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(120),
  /** Swaps: the largest price impact (percent, up to 2 decimals) a swap is sent with unless it raises the cap with maxPriceImpact. */
  SWAP_MAX_PRICE_IMPACT_PERCENT: percent.default('3'),
  /** Settlement-rule swaps: how far (percent) their output may fall short of its value at policy prices before the execution fails. */
  SETTLEMENT_RULES_MAX_PRICE_DEVIATION_PERCENT: percent.default('3'),
  /** Checkout sessions one payment link opens per minute, for all its payers together. */
  CHECKOUT_LINK_SESSIONS_PER_MINUTE: z.coerce.number().int().positive().default(60),
  /** Checkout sessions one client address opens on one payment link per minute; at most half of the link's (at least 1) is used, so no one client uses up a link's sessions. */
  CHECKOUT_CLIENT_LINK_SESSIONS_PER_MINUTE: z.coerce.number().int().positive().default(10),
  /** Reads of checkout sessions (status, QR code) per client address per minute: the page's polling, apart from the budget above. */
  CHECKOUT_SESSION_READS_PER_MINUTE: z.coerce.number().int().positive().default(300),
  /** A checkout's address is watched this long after the checkout's expiry (a late payment is recorded), then deactivated. */
  CHECKOUT_LATE_PAYMENT_GRACE_SECONDS: z.coerce.number().int().min(0).max(30 * 86_400).default(3_600),
  /** Proxies whose X-Forwarded-For names the client: off (default), or their addresses and CIDR ranges (comma-separated). */
  TRUST_PROXY: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return parseTrustProxy(text);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return false;
      }
    }),
  /** How often the worker looks for sweeps due again (ones that could not be arranged, or were held). */
  SWEEP_RETRY_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  /** Delay before a sweep that could not be arranged is tried again; doubled for each further failure (at most an hour). A held sweep is looked at again this often. */
  SWEEP_RETRY_BASE_MS: z.coerce.number().int().positive().default(30_000),
  /** How often the settlement-rule worker looks for due executions. */
  SETTLEMENT_RULES_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /** Delay before a failed settlement execution's second attempt; doubled for each further one (at most 10 minutes). */
  SETTLEMENT_RULES_RETRY_BASE_MS: z.coerce.number().int().positive().default(5_000),
  /** Attempts of one settlement execution before it is FAILED for good. */
  SETTLEMENT_RULES_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  // On-chain settlement of trades (src/modules/settlement).
  SETTLEMENT_ENABLED: bool.default(true),
  /** A batch is formed once this many trades are queued on a chain, or the oldest waited SETTLEMENT_BATCH_MAX_AGE_MS. */
  SETTLEMENT_BATCH_SIZE: z.coerce.number().int().positive().max(5_000).default(200),
  SETTLEMENT_BATCH_MAX_AGE_MS: z.coerce.number().int().min(0).default(2_000),
  SETTLEMENT_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(250),
  /** A settlement transaction unmined this long (and priced below the market) is re-sent with a higher fee. */
  SETTLEMENT_FEE_BUMP_AFTER_MS: z.coerce.number().int().positive().default(30_000),
  SETTLEMENT_LEASE_MS: z.coerce.number().int().positive().default(15_000),
  SETTLEMENT_RECONCILE_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
  /** The operator key that submits batches (hex). Dev chains default to dev account #7. */
  SETTLEMENT_OPERATOR_KEY: z.string().optional(),
  /** Where trading fees go on chain. Dev chains default to dev account #8. */
  SETTLEMENT_FEE_RECIPIENT: z.string().optional(),
  /** Seconds between an account's exit request and its own withdrawal from the contract (escape hatch). */
  SETTLEMENT_EXIT_DELAY_SECONDS: z.coerce.number().int().min(0).default(604_800),
});

export type Config = Omit<z.infer<typeof configSchema>, 'GRAPHQL_INTROSPECTION' | 'GRAPHQL_EXPLORER'> & { GRAPHQL_INTROSPECTION: boolean; GRAPHQL_EXPLORER: boolean };

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const merged = { ...parsed.data, ...overrides };
  // A production schema is not handed to whoever holds a key; sandbox keeps it for tooling.
  const sandbox = merged.KEEL_ENV !== 'production';
  const config: Config = { ...merged, GRAPHQL_INTROSPECTION: merged.GRAPHQL_INTROSPECTION ?? sandbox, GRAPHQL_EXPLORER: merged.GRAPHQL_EXPLORER ?? sandbox };
  if (config.KEEL_ENV === 'production' && config.WEBHOOKS_ALLOW_PRIVATE_URLS) {
    throw new Error('Invalid configuration:\n  WEBHOOKS_ALLOW_PRIVATE_URLS: not allowed in production (it lets webhooks reach private networks)');
  }
  if (config.KEEL_ENV === 'production' && config.RECOVERY_RPC_ALLOW_PRIVATE_URLS) {
    throw new Error('Invalid configuration:\n  RECOVERY_RPC_ALLOW_PRIVATE_URLS: not allowed in production');
  }
  if (config.KEEL_ENV === 'production' && config.KEEL_FAILPOINTS) {
    throw new Error('Invalid configuration:\n  KEEL_FAILPOINTS: a test hook, not allowed in production');
  }
  if (config.KEEL_ENV === 'production' && !config.KEEL_MASTER_KEY) {
    throw new Error('Invalid configuration:\n  KEEL_MASTER_KEY: required in production (32 bytes, hex or base64): it encrypts every wallet secret');
  }
  if (config.ACCESS_TOKEN_DEFAULT_TTL_SECONDS > config.ACCESS_TOKEN_MAX_TTL_SECONDS) {
    throw new Error('Invalid configuration:\n  ACCESS_TOKEN_DEFAULT_TTL_SECONDS: must not exceed ACCESS_TOKEN_MAX_TTL_SECONDS');
  }
  if (config.KEEL_ENV === 'production' && !config.KEEL_CHAINS) {
    throw new Error('Invalid configuration:\n  KEEL_CHAINS: required in production (dev chains run only in sandbox)');
  }
  return config;
}
