import { Knex } from 'knex';
import type { Config } from './config';
import { createDb, ensureDatabase, migrate, requireMigrated } from './db/knex';
import { closeRedis, connectRedis, RedisClient } from './redis';
import { createLogger, Logger } from './logger';
import { Outbox } from './events/outbox';
import { Authenticator } from './auth/authenticator';
import { KeyRows } from './auth/key-rows';
import { ACCESS_TOKEN_KEY_PURPOSE, AccessTokenSigner } from './auth/access-tokens';
import { RateLimiter } from './rate-limit';
import { IdempotencyStore } from './idempotency';
import { Metrics } from './metrics';
import { LiveEventFeed } from './events/live-feed';
import { RealtimeBus } from './events/realtime-bus';
import { JobQueue } from './queue';
import { loadSecretBox, SecretBox } from './crypto/secret-box';
import { UnitOfWork } from './db/unit-of-work';
import { SessionHolder } from './db/session-holder';
import { Failpoints } from './failpoints';
import { reach } from './dependency-unreachable';
import { MonthlyQuota } from './quota/monthly-quota';
import { Clock, systemClock } from './clock';

/** The shared infrastructure every module and host uses, opened once per process. */
export interface Platform {
  config: Config;
  db: Knex;
  redis: RedisClient;
  logger: Logger;
  outbox: Outbox;
  authenticator: Authenticator;
  /** Signs and verifies short-lived access tokens under a key derived from KEEL_MASTER_KEY. */
  accessTokens: AccessTokenSigner;
  rateLimiter: RateLimiter;
  /** Each organisation's monthly request quota (Redis count, PostgreSQL record). */
  quota: MonthlyQuota;
  idempotency: IdempotencyStore;
  /** The transaction state-changing work runs in, recorded on the request's idempotency claim. */
  unitOfWork: UnitOfWork;
  /** Crash points armed by KEEL_FAILPOINTS (sandbox only). */
  failpoints: Failpoints;
  metrics: Metrics;
  /** This process's own PostgreSQL session: its mark of life, and the notifications it hears. */
  session: SessionHolder;
  liveFeed: LiveEventFeed;
  /** Realtime order-book messages between the nodes (Redis pub/sub, best effort). */
  realtimeBus: RealtimeBus;
  /** Seals and opens secrets at rest under KEEL_MASTER_KEY (and KEEL_MASTER_KEY_PREVIOUS during a rotation). */
  secretBox: SecretBox;
  /** The named Redis-backed job queue, opened on first use and closed with the platform. */
  jobQueue<T>(name: string): JobQueue<T>;
  close(): Promise<void>;
}

export interface PlatformOptions {
  /** Where the monthly quota reads the time (tests move it across a month's end). */
  clock?: Clock;
  /**
   * `migrate` (the default, for `keel start`): create the database when missing and apply the
   * pending migrations. `require`: neither; a database missing or not at this build's migration level
   * is refused (DatabaseNotReady), as for the operator commands beside a live deployment.
   */
  schema?: 'migrate' | 'require';
}

export async function openPlatform(config: Config, logger = createLogger(config.LOG_LEVEL), options: PlatformOptions = {}): Promise<Platform> {
  const migrates = options.schema !== 'require';
  if (migrates) await reach('PostgreSQL', config.DATABASE_URL, () => ensureDatabase(config.DATABASE_URL, config.STARTUP_CONNECT_TIMEOUT_MS));
  const db = createDb(config.DATABASE_URL, config.DB_POOL_MAX, { preparedStatements: config.DB_PREPARED_STATEMENTS, acquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS, logger });
  const secretBox = loadSecretBox(config, logger);
  let redis: RedisClient;
  try {
    if (migrates) {
      const applied = await migrate(db, { secretBox });
      if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    } else {
      await reach('PostgreSQL', config.DATABASE_URL, () => requireMigrated(db, config.DATABASE_URL));
    }
    redis = await reach('Redis', config.REDIS_URL, () => connectRedis(config.REDIS_URL, config.STARTUP_CONNECT_TIMEOUT_MS));
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const accessTokens = new AccessTokenSigner(secretBox.deriveKeys(ACCESS_TOKEN_KEY_PURPOSE));
  const authenticator = new Authenticator(new KeyRows(db), config.KEEL_ENV, config.AUTH_CACHE_TTL_MS, `${config.REDIS_PREFIX}auth:invalidate`, config.REDIS_COMMAND_TIMEOUT_MS, accessTokens);
  await authenticator.listen(redis);
  const liveFeed = new LiveEventFeed(config.REDIS_URL, config.REDIS_PREFIX);
  const realtimeBus = new RealtimeBus(config.REDIS_URL, `${config.REDIS_PREFIX}realtime`);
  const queues = new Map<string, JobQueue<unknown>>();
  // Idempotency claims name this process's live session, so a retry after a crash need not wait.
  const sessionHolder = await SessionHolder.open(config.DATABASE_URL, { logger });
  const idempotency = new IdempotencyStore(db, config.IDEMPOTENCY_TTL_SECONDS, config.IDEMPOTENCY_LOCK_SECONDS, secretBox, sessionHolder);
  const failpoints = Failpoints.fromConfig(config, logger);
  const quota = new MonthlyQuota(
    db,
    redis,
    { prefix: config.REDIS_PREFIX, tierQuotas: config.MONTHLY_QUOTAS, limitCacheSeconds: config.QUOTA_LIMIT_CACHE_SECONDS, flushIntervalMs: config.QUOTA_FLUSH_INTERVAL_MS, redisTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS },
    options.clock ?? systemClock,
    logger,
  );
  quota.start();
  return {
    config,
    db,
    redis,
    logger,
    outbox: new Outbox(config.KEEL_ENV),
    authenticator,
    accessTokens,
    rateLimiter: new RateLimiter(redis, config.REDIS_PREFIX, config.RATE_LIMIT_SCALE, config.REDIS_COMMAND_TIMEOUT_MS),
    quota,
    idempotency,
    unitOfWork: new UnitOfWork(db, idempotency, failpoints),
    failpoints,
    metrics: new Metrics(),
    session: sessionHolder,
    liveFeed,
    realtimeBus,
    secretBox,
    jobQueue<T>(name: string): JobQueue<T> {
      let queue = queues.get(name);
      if (!queue) queues.set(name, (queue = new JobQueue<unknown>(name, config.REDIS_URL, `${config.REDIS_PREFIX}bull`, config.REDIS_COMMAND_TIMEOUT_MS)));
      return queue as JobQueue<T>;
    },
    async close() {
      // Its last counts need PostgreSQL and Redis: before either closes.
      await quota.close();
      await Promise.all([...queues.values()].map((q) => q.close()));
      await liveFeed.close();
      await realtimeBus.close();
      await authenticator.close();
      await sessionHolder.close();
      await closeRedis(redis, config.REDIS_COMMAND_TIMEOUT_MS);
      await db.destroy();
    },
  };
}
