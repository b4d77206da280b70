import type { JobQueue } from '../../platform/queue';

export interface DeliveryJob {
  deliveryId: string;
  /** The attempt count the job expects; a job that finds another count is stale and does nothing. */
  attempts: number;
}

/** One queue job: deliveries due at the same moment, attempted concurrently. */
export interface DeliveryBatch {
  deliveries: DeliveryJob[];
}

export interface DueDelivery {
  id: string;
  attempts: number;
  nextAttemptAt: Date | string | null;
}

const BATCH_SIZE = 50;

/**
 * Puts due deliveries on the Redis queue, grouped by due time into jobs of up to BATCH_SIZE (a
 * queue job per delivery would cost more than the delivery itself at high rates). A job's id is
 * derived from its contents, so re-queueing a batch that is still queued does nothing.
 */
export class DeliveryScheduler {
  constructor(private readonly queue: JobQueue<DeliveryBatch>) {}

  async schedule(deliveries: DueDelivery[]): Promise<void> {
    const now = Date.now();
    const byDueTime = new Map<number, DeliveryJob[]>();
    for (const d of deliveries) {
      if (d.nextAttemptAt === null) continue;
      const due = new Date(d.nextAttemptAt).getTime();
      const group = byDueTime.get(due) ?? [];
      group.push({ deliveryId: d.id, attempts: d.attempts });
      byDueTime.set(due, group);
    }
    const jobs = [];
    for (const [due, group] of byDueTime) {
      for (let i = 0; i < group.length; i += BATCH_SIZE) {
        const chunk = group.slice(i, i + BATCH_SIZE);
        jobs.push({ id: `${chunk[0].deliveryId}_${chunk[0].attempts}_${due}_${chunk.length}`, data: { deliveries: chunk }, delayMs: due - now });
      }
    }
    await this.queue.add(jobs);
  }
}
