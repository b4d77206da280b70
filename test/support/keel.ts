import { randomBytes } from 'node:crypto';
import { Config, loadConfig } from '../../src/platform/config';
import { startKeel, Keel } from '../../src/app';
import { onboardOrganization, OnboardedOrganization } from '../../src/modules/api-keys/onboarding';
import { issueOperatorKey } from '../../src/modules/api-keys/operator-key';
import type { Tier } from '../../src/platform/auth/permissions';
import { createTestDatabase, dropTestDatabase, runPrefix } from './databases';
import { ApiClient } from './api-client';
import type { Logger } from '../../src/platform/logger';
import type { Clock } from '../../src/platform/clock';

export interface TestKeel {
  keel: Keel;
  config: Config;
  coreUrl: string;
  proUrl: string;
  createOrg(opts?: { name?: string; tier?: Tier; proAccess?: boolean }): Promise<TestOrg>;
  /** A pro-host client with a fresh operator key: markets are the operator's to create and manage. */
  operator(): Promise<ApiClient>;
  /** Stops this Keel and starts a new one on the same database and Redis prefix (new ports). */
  restart(overrides?: Partial<Config>): Promise<void>;
  stop(): Promise<void>;
}

export interface TestOrg extends OnboardedOrganization {
  core: ApiClient;
  pro: ApiClient;
}

/** A test Keel's configuration: its own database and Redis prefix, loopback, any free ports, the run's dev chains. */
export function testKeelConfig(name: string, databaseUrl: string, overrides: Partial<Config> = {}): Config {
  return loadConfig(
    {},
    {
      DATABASE_URL: databaseUrl,
      REDIS_PREFIX: `keeltest:${name}:`,
      HOST: '127.0.0.1',
      CORE_PORT: 0,
      PRO_PORT: 0,
      // TEST_LOG_LEVEL=warn shows a failing test's server log (pino writes past jest's capture).
      LOG_LEVEL: (process.env.TEST_LOG_LEVEL as Config['LOG_LEVEL'] | undefined) ?? 'silent',
      DB_POOL_MAX: 5,
      KEEL_CHAINS: process.env.KEEL_CHAINS,
      KEEL_MASTER_KEY: process.env.KEEL_MASTER_KEY,
      // Settlement tries to move funds the test credited by hand: only tests of settlement turn it on.
      SETTLEMENT_ENABLED: false,
      ...overrides,
    },
  );
}

/** `clock`: where the monthly quota reads the time (a test moves it across a month's end). */
export interface TestKeelOptions {
  logger?: Logger;
  clock?: Clock;
}

/** A whole Keel (both hosts) on real PostgreSQL and Redis, with its own database and Redis prefix. */
export async function startTestKeel(overrides: Partial<Config> = {}, opts: TestKeelOptions = {}): Promise<TestKeel> {
  const t = {} as TestKeel;
  await startTestKeelInto(t, overrides, opts);
  return t;
}

/** Starts a test Keel into `t` (filled in place, for handles handed out before it starts). */
export async function startTestKeelInto(t: TestKeel, overrides: Partial<Config>, opts: TestKeelOptions): Promise<void> {
  const name = `${runPrefix()}_${randomBytes(4).toString('hex')}`;
  const config = testKeelConfig(name, await createTestDatabase(name), overrides);
  let orgs = 0;
  Object.assign(t, {
    keel: await startKeel(config, opts.logger, { clock: opts.clock }),
    config,
    coreUrl: '',
    proUrl: '',
    async restart(more: Partial<Config> = {}) {
      await t.keel.stop();
      t.config = { ...config, ...more };
      t.keel = await startKeel(t.config, opts.logger, { clock: opts.clock });
      t.coreUrl = t.keel.core?.url ?? '';
      t.proUrl = t.keel.pro?.url ?? '';
    },
    async createOrg(org: { name?: string; tier?: Tier; proAccess?: boolean } = {}): Promise<TestOrg> {
      const keel = t.keel;
      const onboarded = await onboardOrganization(keel.platform.db, keel.services, {
        name: org.name ?? `Org ${++orgs}`,
        tier: org.tier ?? 'Business',
        proAccess: org.proAccess ?? true,
      });
      return {
        ...onboarded,
        core: new ApiClient(keel.core?.url ?? '', { apiKey: onboarded.adminKey, orgId: onboarded.orgId }),
        pro: new ApiClient(keel.pro?.url ?? '', { apiKey: onboarded.proKey ?? '', orgId: onboarded.orgId }),
      };
    },
    async operator() {
      const { orgId, key } = await issueOperatorKey(t.keel.services);
      return new ApiClient(t.keel.pro?.url ?? '', { apiKey: key, orgId });
    },
    async stop() {
      const keel = t.keel;
      const redis = keel.platform.redis;
      for await (const keys of redis.scanIterator({ MATCH: `${config.REDIS_PREFIX}*`, COUNT: 500 })) {
        if (keys.length) await redis.del(keys);
      }
      await keel.stop();
      await dropTestDatabase(name);
    },
  } satisfies TestKeel);
  t.coreUrl = t.keel.core?.url ?? '';
  t.proUrl = t.keel.pro?.url ?? '';
}

/**
 * A second admin key of the organisation and its id: four eyes, the key that asked for a held
 * transfer (`org.core`'s) may reject it but not approve it, so this one approves.
 */
export async function anotherAdmin(org: TestOrg): Promise<{ core: ApiClient; keyId: string }> {
  const res = await org.core.request('POST', '/v1/api-keys', { body: { name: 'second approver', scopes: ['admin'] } });
  if (res.status !== 201) throw new Error(`a second admin key was refused: ${JSON.stringify(res.body)}`);
  return { core: org.core.with({ apiKey: res.body.data.secret, orgId: org.orgId }), keyId: res.body.data.id };
}
