import { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import type { DeliveryScheduler } from './delivery-scheduler';

/**
 * PostgreSQL is the source of truth for what is due. Every interval, deliveries that are overdue
 * and not leased are queued again: this covers jobs Redis lost (a flush or restart), a crash
 * between commit and enqueue, and a worker killed mid-attempt once its lease runs out.
 * Duplicate jobs are harmless: the attempt lease lets only one of them send.
 */
export class DeliverySweeper {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Knex,
    private readonly scheduler: DeliveryScheduler,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly batchSize = 5_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.sweepOnce().catch((error) => this.logger.warn({ err: error }, 'webhook sweep failed'));
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Re-queues deliveries overdue by more than one interval; returns how many. */
  async sweepOnce(): Promise<number> {
    const overdue = await this.db('webhook_deliveries')
      .select('id', 'attempts', 'nextAttemptAt')
      .whereNotNull('nextAttemptAt')
      .where('nextAttemptAt', '<', this.db.raw(`now() - (? * interval '1 millisecond')`, [this.intervalMs]))
      .where((q) => q.whereNull('leaseUntil').orWhere('leaseUntil', '<', this.db.fn.now()))
      .orderBy('nextAttemptAt')
      .limit(this.batchSize);
    if (overdue.length) {
      this.logger.info({ count: overdue.length }, 're-queueing overdue webhook deliveries');
      await this.scheduler.schedule(overdue);
    }
    return overdue.length;
  }
}
