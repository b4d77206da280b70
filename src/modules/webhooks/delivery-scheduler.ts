import type { JobQueue } from '../../platform/queue';

export interface DeliveryJob {
  deliveryId: string;
  /** The attempt count the job expects; a job that finds another count is stale and does nothing. */
  attempts: number;
}

export interface DueDelivery {
  id: string;
  attempts: number;
  nextAttemptAt: Date | string | null;
}

/** Puts due deliveries on the Redis queue; one job per (delivery, attempt, due time). */
export class DeliveryScheduler {
  constructor(private readonly queue: JobQueue<DeliveryJob>) {}

  async schedule(deliveries: DueDelivery[]): Promise<void> {
    const now = Date.now();
    await this.queue.add(
      deliveries
        .filter((d) => d.nextAttemptAt !== null)
        .map((d) => {
          const due = new Date(d.nextAttemptAt!).getTime();
          return { id: `${d.id}_${d.attempts}_${due}`, data: { deliveryId: d.id, attempts: d.attempts }, delayMs: due - now };
        }),
    );
  }
}
