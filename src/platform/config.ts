import { z } from 'zod';

/**
 * Every environment variable Keel reads, validated once at start-up.
 * The README's configuration table is written from this schema; keep them in step.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

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
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(1_048_576),
  API_KEY_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).default(86_400),
  IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().positive().default(86_400),
  IDEMPOTENCY_LOCK_SECONDS: z.coerce.number().int().positive().default(60),
  RATE_LIMIT_SCALE: z.coerce.number().positive().default(1),
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5_000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  DB_POOL_MAX: z.coerce.number().int().positive().default(20),
  GRAPHQL_INTROSPECTION: bool.default(true),
  WEBHOOKS_ALLOW_PRIVATE_URLS: bool.default(false),
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
  OUTBOX_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(50),
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const config = { ...parsed.data, ...overrides };
  if (config.KEEL_ENV === 'production' && config.WEBHOOKS_ALLOW_PRIVATE_URLS) {
    throw new Error('Invalid configuration:\n  WEBHOOKS_ALLOW_PRIVATE_URLS: not allowed in production (it lets webhooks reach private networks)');
  }
  return config;
}
