import { randomUUID } from 'node:crypto';
import { createDb, Db } from '../../../src/platform/db/knex';
import { createLogger } from '../../../src/platform/logger';
import { connectRedis, RedisClient } from '../../../src/platform/redis';
import { FencedLeases } from '../../../src/platform/fenced-leases';
import { MonthlyQuota } from '../../../src/platform/quota/monthly-quota';
import { TIER_MONTHLY_QUOTAS } from '../../../src/platform/quota/tier-quotas';
import { systemClock } from '../../../src/platform/clock';
import { ShardLeadership } from '../../../src/modules/orders/shard-leadership';
import { ShardMap } from '../../../src/modules/orders/shard-map';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../../support/databases';
import { PrivateRedis } from '../../support/private-redis';
import { eventually } from '../../support/eventually';

/**
 * A loop that meets a PostgreSQL error logs it as the error, which the log's serializer writes
 * without the SQL knex put in front of PostgreSQL's words. PostgreSQL here refuses every write
 * (what a node pointed at a standby after a failover gets): the same real error, every time.
 */
const NAME = `${runPrefix()}_error_log_lines`;
let readOnly: Db;
let privateRedis: PrivateRedis;
let redis: RedisClient;

beforeAll(async () => {
  const url = new URL(await createTestDatabase(NAME));
  url.searchParams.set('options', '-c default_transaction_read_only=on');
  readOnly = createDb(url.toString(), 2);
  privateRedis = await PrivateRedis.start();
  redis = await connectRedis(privateRedis.url);
});

afterAll(async () => {
  redis.destroy();
  await privateRedis.kill();
  await readOnly.destroy();
  await dropTestDatabase(NAME);
});

/** A logger writing into `lines` (raw JSON text, as it would reach a log file). */
function capture() {
  const lines: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void lines.push(line) });
  const line = (msg: string) => lines.map((l) => JSON.parse(l)).find((l) => l.msg === msg);
  return { logger, lines, line };
}

const READ_ONLY = { code: '25006', severity: 'ERROR', message: 'cannot execute INSERT in a read-only transaction' };

test("the monthly quota's flush that PostgreSQL refuses is logged with PostgreSQL's words and code, not the INSERT knex quoted", async () => {
  const { logger, lines, line } = capture();
  const quota = new MonthlyQuota(readOnly, redis, { prefix: 'errlog:', tierQuotas: TIER_MONTHLY_QUOTAS, limitCacheSeconds: 60, flushIntervalMs: 20, redisTimeoutMs: 1_000 }, systemClock, logger);
  quota.record.count(randomUUID(), '2026-11-29', randomUUID(), 3);
  quota.start();
  try {
    const failed = await eventually(() => line('flushing request counts to PostgreSQL failed; kept for the next flush'), 5_000);
    expect(failed.err).toMatchObject({ type: 'DatabaseError', ...READ_ONLY });
    expect(failed.err.stack).toMatch(/^error: cannot execute INSERT in a read-only transaction\n\s+at /);
  } finally {
    await quota.close();
  }
  expect(lines.join('\n')).not.toMatch(/api_usage_daily|api_usage_monthly|unnest|insert into/i);
});

test('a shard lease whose fencing token PostgreSQL refuses to record is logged given back with the error, not the statement', async () => {
  const { logger, lines, line } = capture();
  const leadership = new ShardLeadership(readOnly, new FencedLeases(redis, 'errlog:'), new ShardMap(1, { 'ETH-USDC': 0 }), { nodeId: 'node-a', eligible: [0], ttlMs: 1000, renewMs: 250, marginMs: 200 }, logger);
  leadership.onShards({ gained: async () => undefined, lost: async () => undefined });
  await leadership.start();
  try {
    const given = await eventually(() => line('shard lease given back: its fencing token could not be recorded in PostgreSQL'), 5_000);
    expect(given).toMatchObject({ shard: 0, err: { type: 'DatabaseError', ...READ_ONLY } });
    expect(leadership.heldShards()).toEqual([]);
  } finally {
    await leadership.stop();
  }
  expect(lines.join('\n')).not.toMatch(/orderbook_shards|fencing_token|leader_node_id|insert into/i);
});
