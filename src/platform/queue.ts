import { setTimeout as sleep } from 'node:timers/promises';
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
  /** On stopping, how long the running jobs are waited for: as long as one may take. */
  stopWithinMs: number;
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
  private readonly workers: { worker: Worker; stopWithinMs: number }[] = [];
  /** The handlers running now, as this process sees them (BullMQ's count of running jobs is in Redis). */
  private readonly running = new Set<Promise<void>>();
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
    const worker = new Worker<T>(this.name, (job: Job<T>) => this.track(handler(job.data)), {
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
    this.workers.push({ worker, stopWithinMs: options.stopWithinMs });
  }

  /**
   * Takes no further job and waits for the running ones to finish, at most their stopWithinMs; then
   * closes each consumer without waiting on Redis (close() does all this too). BullMQ's own wait
   * needs Redis (its blocking connection retries without end), so with Redis down it would never
   * return: the handlers' own end then suffices. A job still running at the bound is handed to
   * another worker once its lock runs out.
   */
  async stopWorking(): Promise<void> {
    await Promise.all(
      this.workers.map(async ({ worker, stopWithinMs }) => {
        const drained = Promise.race([worker.pause(), this.handlersDone()]);
        await withinMs(drained, stopWithinMs, 'the running jobs').catch(() => undefined);
        await worker.close(true);
      }),
    );
  }

  private track(work: Promise<void>): Promise<void> {
    this.running.add(work);
    return work.finally(() => this.running.delete(work));
  }

  private async handlersDone(): Promise<void> {
    // A job fetched just as the consumer paused starts within a Redis command's time.
    await sleep(this.addTimeoutMs);
    while (this.running.size) await Promise.allSettled(this.running);
  }

  async close(): Promise<void> {
    await this.stopWorking();
    await this.queue.close();
    for (const c of this.workerConnections) c.disconnect();
    this.connection.disconnect();
  }
}
