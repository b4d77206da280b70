import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { commandCpuMicros, cpuMicros, median, startTradingBench } from './support';

/**
 * What an idle deployment costs: Keel laid out as the orders benchmark lays it out (an order-book
 * node, the core host and the worker on a second process, the dev chain in a third, its default
 * polling), started, left 10 s to settle, then the CPU each spends while nobody calls it: the
 * pollers (chain watchers, the transaction sender, settlement, checkouts, settlement rules, the
 * outbox relay), leases and the chain's blocks, and what they cost PostgreSQL and Redis. `windows`
 * windows of `seconds` each; medians, in ms of CPU a second.
 * The machine's speed moves between days (the same build's figures have differed nearly threefold), so the
 * yardstick is a fixed piece of work (2,000 SHA-256 digests and a JSON round trip of 2,000 small
 * objects) timed in this process after each window: `machineIdleTimesYardstick` is the machine's idle
 * CPU a second in units of that work, comparable across days.
 * Beside the CPU, two counts the machine's speed does not move: the bench database's transactions a
 * second (each statement outside a transaction is one) and the write-ahead log PostgreSQL writes a
 * second (the whole server's, nothing else running).
 * `npm run bench -- idle [seconds] [windows]`; BENCH_KEEL_ROOT names another build to measure.
 */
export async function run(args: string[]): Promise<object> {
  const seconds = Number(args[0] ?? 10);
  const windows = Number(args[1] ?? 3);
  const { server, env, stop } = await startTradingBench('idle', 4940, 4941, 31397, 'order-book-node');
  const pg = new Client({ connectionString: env.DATABASE_URL });
  await pg.connect();
  try {
    await sleep(10_000);
    yardstickWorkMs(); // compiled before it is timed
    const [orderBookNode, hub] = server.processes.map((p) => p.pid);
    const sample = () => ({
      orderBookNode: cpuMicros(orderBookNode) ?? 0,
      hub: cpuMicros(hub) ?? 0,
      devChain: server.beside.reduce((sum, pid) => sum + (cpuMicros(pid) ?? 0), 0),
      postgres: commandCpuMicros('postgres'),
      redis: commandCpuMicros('redis-server'),
    });
    // One statement of the benchmark's own a reading, so a window's count includes one of its own.
    const database = async () => {
      const { rows } = await pg.query(
        `SELECT xact_commit + xact_rollback AS transactions, pg_current_wal_lsn() - '0/0'::pg_lsn AS wal FROM pg_stat_database WHERE datname = current_database()`,
      );
      return { transactions: Number(rows[0].transactions), walBytes: Number(rows[0].wal) };
    };
    const taken: Record<keyof ReturnType<typeof sample>, number>[] = [];
    const counted: { transactions: number; walBytes: number }[] = [];
    const yardstickMs: number[] = [];
    for (let w = 0; w < windows; w++) {
      const [before, dbBefore] = [sample(), await database()];
      await sleep(seconds * 1000);
      const [after, dbAfter] = [sample(), await database()];
      taken.push(Object.fromEntries(Object.entries(after).map(([k, v]) => [k, (v - before[k as keyof typeof before]) / 1000 / seconds])) as Record<keyof typeof before, number>);
      counted.push({ transactions: (dbAfter.transactions - dbBefore.transactions) / seconds, walBytes: (dbAfter.walBytes - dbBefore.walBytes) / seconds });
      yardstickMs.push(yardstickWorkMs());
    }
    const msPerSecond = Object.fromEntries(Object.keys(taken[0]).map((k) => [k, round(median(taken.map((t) => t[k as keyof (typeof taken)[0]])))]));
    const machine = taken.map((t) => Object.values(t).reduce((a, b) => a + b, 0));
    const yardstick = median(yardstickMs);
    return {
      benchmark: 'idle',
      secondsPerWindow: seconds,
      windows,
      msPerSecond,
      machineMsPerSecond: round(median(machine)),
      machineMsPerSecondRuns: machine.map(round),
      yardstick: { what: '2,000 SHA-256 digests of 64 bytes and a JSON round trip of 2,000 small objects, in the benchmark process', ms: round(yardstick), runs: yardstickMs.map(round) },
      machineIdleTimesYardstick: round(median(machine) / yardstick),
      databaseTransactionsPerSecond: round(median(counted.map((c) => c.transactions))),
      walBytesPerSecond: Math.round(median(counted.map((c) => c.walBytes))),
      databaseRuns: counted.map((c) => ({ transactionsPerSecond: round(c.transactions), walBytesPerSecond: Math.round(c.walBytes) })),
    };
  } finally {
    await pg.end();
    await stop();
  }
}

function yardstickWorkMs(): number {
  const start = process.cpuUsage();
  const block = Buffer.alloc(64, 7);
  for (let i = 0; i < 2_000; i++) createHash('sha256').update(block).update(String(i)).digest();
  JSON.parse(JSON.stringify(Array.from({ length: 2_000 }, (_, i) => ({ id: i, name: `item ${i}`, at: new Date(i).toISOString() }))));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const round = (n: number) => Math.round(n * 100) / 100;
