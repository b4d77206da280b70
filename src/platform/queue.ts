import { Job, Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { withinMs } from './time-bound';

export interface QueuedJob<T> {
  /** Deduplicates: adding a job whose id is still queued or running does nothing. */
  id: string;
  data: T;
  delayMs?: number;
}

export interface WorkOptions {
  concurrency: number;
  /** A running job whose worker stops renewing its lock for this long is handed to another worker. */
  lockDurationMs: number;
}

/**
 * A Redis-backed job queue (BullMQ). Redis holds only a working copy: every job can be recreated
 * from PostgreSQL, so callers re-enqueue what the database says is due. Adding is therefore best
 * effort and bounded in time: with Redis down or paused, `add` gives up after `addTimeoutMs`
 * (no offline queue grows meanwhile) and the caller's sweeper queues the work again later.
 */
export class JobQueue<T> {
  private readonly connection: IORedis;
  private readonly queue: Queue;
  private readonly workers: Worker[] = [];
  /** BullMQ leaves connections it was handed open; these are closed by close(). */
  private readonly workerConnections: IORedis[] = [];

  constructor(
    private readonly name: string,
    redisUrl: string,
    private readonly prefix: string,
    private readonly addTimeoutMs: number,
  ) {
    this.connection = new IORedis(redisUrl, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    this.connection.on('error', () => {
      // Reconnects on its own; callers see failures through their own commands.
    });
    this.queue = new Queue(name, { connection: this.connection, prefix, defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 } });
    // Without a listener BullMQ prints every reconnect failure to stderr; add() reports outages itself.
    this.queue.on('error', () => undefined);
  }

  /** Queues the jobs; false when Redis did not take them in time (they stay due in PostgreSQL). */
  async add(jobs: QueuedJob<T>[]): Promise<boolean> {
    if (!jobs.length) return true;
    const added = this.queue.addBulk(jobs.map((j) => ({ name: this.name, data: j.data, opts: { jobId: j.id, delay: Math.max(0, j.delayMs ?? 0) } })));
    return withinMs(added, this.addTimeoutMs, 'Redis').then(
      () => true,
      () => false,
    );
  }

  work(handler: (data: T) => Promise<void>, options: WorkOptions): void {
    // Workers wait for Redis to come back (BullMQ requires it of their blocking connection).
    const connection = this.connection.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true });
    this.workerConnections.push(connection);
    const worker = new Worker<T>(this.name, (job: Job<T>) => handler(job.data), {
      connection,
      prefix: this.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.lockDurationMs,
      maxStalledCount: 1_000,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    worker.on('error', () => {
      // Connection trouble; BullMQ reconnects and the database-driven re-enqueue covers lost jobs.
    });
    this.workers.push(worker);
  }

  /** Takes no further job and waits for the running ones to finish (close() does it too). */
  async stopWorking(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }

  async close(): Promise<void> {
    await this.stopWorking();
    await this.queue.close();
    for (const c of this.workerConnections) c.disconnect();
    this.connection.disconnect();
  }
}
