import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createDb, ensureDatabase, migrate } from '../src/platform/db/knex';
import * as statusInPlace from '../src/platform/db/migrations/050_settlement_status_updates_in_place';
import { batchTrades, queuedTrades, setBatchTradesStatus } from '../src/modules/orders';
import { cpuMicros, freshDatabase, median } from './support';

/**
 * What the trades table costs PostgreSQL per trade when the order book writes a trade and
 * settlement then moves it through its batch (BATCHED, SUBMITTED, CONFIRMED), on Keel's schema and,
 * side by side, on the schema before migration 050 (the status in two partial indexes' predicates,
 * so that every status change wrote the row again with an entry in each index). Deterministic
 * figures beside the orders benchmark's, whose spread on this machine is wider than the change:
 * WAL bytes per trade (pg_current_wal_lsn), the database backend's CPU per trade (its /proc stat)
 * and the share of updates made in place (heap-only).
 *
 * Per round and schema, in a database of its own, from an empty table after a checkpoint: `trades`
 * trades written 25 a statement (the order book's group commit writes a group's trades in one), then
 * settled `batch` at a time with the settlement module's own statements on Keel's schema (the queue
 * read, into a batch, the two status changes) and the statements they replaced on the schema before.
 * Rounds alternate the schemas; medians.
 * `npm run bench -- trade-settlement-writes [trades] [rounds] [batch]`
 */
export async function run(args: string[]): Promise<object> {
  const trades = Number(args[0] ?? 20_000);
  const rounds = Number(args[1] ?? 3);
  const batch = Number(args[2] ?? 500);
  const schemas = {
    now: await schemaDatabase('keel_bench_trade_writes_now', false),
    before: await schemaDatabase('keel_bench_trade_writes_before', true),
  };
  try {
    const results: Record<keyof typeof schemas, Round[]> = { now: [], before: [] };
    for (let i = 0; i < rounds; i++) {
      for (const name of ['before', 'now'] as const) results[name].push(await round(schemas[name], name, trades, batch));
    }
    const summary = (rs: Round[]) => Object.fromEntries(Object.keys(rs[0]).map((k) => [k, median(rs.map((r) => r[k as keyof Round]))])) as unknown as Round;
    const now = summary(results.now);
    const before = summary(results.before);
    const ratio = (k: keyof Round) => Math.round((now[k] / before[k]) * 100) / 100;
    return {
      benchmark: 'trade-settlement-writes',
      tradesPerRound: trades,
      tradesPerBatch: batch,
      rounds,
      now: { what: "Keel's schema: no index reads the settlement status; the queue is the trades in no batch", runs: results.now, median: now },
      before: { what: 'the schema before migration 050: the queue and the unsettled trades as partial indexes on the status', runs: results.before, median: before },
      nowOverBefore: {
        settlementWalBytes: ratio('settlementWalBytesPerTrade'),
        settlementBackendCpu: ratio('settlementBackendCpuMicrosPerTrade'),
        insertWalBytes: ratio('insertWalBytesPerTrade'),
        insertBackendCpu: ratio('insertBackendCpuMicrosPerTrade'),
      },
    };
  } finally {
    await Promise.all(Object.values(schemas).map((s) => s.db.destroy()));
  }
}

interface Schema {
  db: Knex;
  marketId: string;
}

interface Round {
  insertWalBytesPerTrade: number;
  insertBackendCpuMicrosPerTrade: number;
  settlementWalBytesPerTrade: number;
  settlementBackendCpuMicrosPerTrade: number;
  settlementHeapOnlyUpdateShare: number;
}

/** A database migrated as Keel migrates, then (for the schema before) migration 050 taken back; one connection, so one backend to measure. */
async function schemaDatabase(name: string, before: boolean): Promise<Schema> {
  const url = await freshDatabase(name);
  await ensureDatabase(url);
  const db = createDb(url, 1);
  await migrate(db);
  if (before) await statusInPlace.down(db);
  // Trades check no foreign keys (migration 049): a market id is all a trade needs here.
  return { db, marketId: randomUUID() };
}

async function round({ db, marketId }: Schema, schema: 'now' | 'before', trades: number, batch: number): Promise<Round> {
  await db.raw('TRUNCATE trades');
  await db.raw('CHECKPOINT');
  const pid = (await db.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
  const measure = async (work: () => Promise<void>) => {
    const wal0 = await walPosition(db);
    const cpu0 = backendCpuMicros(pid);
    await work();
    return { walBytes: (await walPosition(db)) - wal0, cpuMicros: backendCpuMicros(pid) - cpu0 };
  };
  const inserted = await measure(async () => {
    for (let from = 0; from < trades; from += 25) await insertTrades(db, marketId, from, Math.min(from + 25, trades));
  });
  const updates0 = await tradeUpdates(db);
  const settled = await measure(async () => {
    for (;;) {
      const batchId = randomUUID();
      const taken = await db.transaction(async (trx) => {
        const ids = schema === 'now' ? (await queuedTrades(trx, trx.select(trx.raw('?::uuid AS id', [marketId])), batch)).map((t) => t.id) : await queuedBefore(trx, marketId, batch);
        if (ids.length) await (schema === 'now' ? batchTrades(trx, ids, batchId) : trx.raw(`UPDATE trades SET settlement_batch_id = ?, settlement_status = 'BATCHED' WHERE id = ANY(?::uuid[])`, [batchId, ids]));
        return ids.length;
      });
      if (!taken) break;
      for (const status of ['SUBMITTED', 'CONFIRMED'] as const) await db.transaction((trx) => setBatchTradesStatus(trx, batchId, status));
    }
  });
  const updates = await tradeUpdates(db);
  return {
    insertWalBytesPerTrade: Math.round(inserted.walBytes / trades),
    insertBackendCpuMicrosPerTrade: Math.round((inserted.cpuMicros / trades) * 10) / 10,
    settlementWalBytesPerTrade: Math.round(settled.walBytes / trades),
    settlementBackendCpuMicrosPerTrade: Math.round((settled.cpuMicros / trades) * 10) / 10,
    settlementHeapOnlyUpdateShare: Math.round(((updates.hot - updates0.hot) / Math.max(1, updates.all - updates0.all)) * 100) / 100,
  };
}

/** A group's trades as the order book writes them: one statement, keys and times as a live book's. */
async function insertTrades(db: Knex, marketId: string, from: number, to: number): Promise<void> {
  await db.raw(
    `INSERT INTO trades (id, market_id, sequence, maker_order_id, taker_order_id, maker_wallet_id, taker_wallet_id, taker_side, price, quantity, quote_amount, maker_fee, taker_fee, created_at)
     SELECT gen_random_uuid(), ?, g, gen_random_uuid(), gen_random_uuid(), ?, ?, CASE WHEN g % 2 = 0 THEN 'BUY' ELSE 'SELL' END, 2000.5, 0.01, 20.005, 0.020005, 0.04001, now()
       FROM generate_series(?::bigint, ?::bigint) g`,
    [marketId, WALLETS[0], WALLETS[1], from, to - 1],
  );
}
const WALLETS = [randomUUID(), randomUUID()];

/** The queue's read as it was before migration 050: by the status's partial index. */
async function queuedBefore(trx: Knex.Transaction, marketId: string, limit: number): Promise<string[]> {
  const { rows } = await trx.raw(
    `SELECT t.id FROM trades t
      WHERE t.settlement_status = 'QUEUED' AND (t.settlement_retry_at IS NULL OR t.settlement_retry_at <= now()) AND t.market_id = ANY(ARRAY(SELECT ?::uuid))
      ORDER BY t.settlement_key LIMIT ? FOR UPDATE SKIP LOCKED`,
    [marketId, limit],
  );
  return rows.map((r: { id: string }) => r.id);
}

async function walPosition(db: Knex): Promise<number> {
  return Number((await db.raw(`SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn AS bytes`)).rows[0].bytes);
}

async function tradeUpdates(db: Knex): Promise<{ all: number; hot: number }> {
  await db.raw('SELECT pg_stat_force_next_flush()');
  await db.raw('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.raw(`SELECT n_tup_upd AS all, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'trades'`);
  return { all: Number(rows[0].all), hot: Number(rows[0].hot) };
}

/** The backend's CPU so far (user and system) in µs, from /proc: PostgreSQL runs on this machine. */
function backendCpuMicros(pid: number): number {
  const micros = cpuMicros(pid);
  if (micros === undefined) throw new Error(`the database backend ${pid} is not readable in /proc: PostgreSQL must run on this machine`);
  return micros;
}
