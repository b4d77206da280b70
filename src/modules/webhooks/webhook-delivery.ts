import type { Platform } from '../../platform/platform';
import type { OutboundGuard } from '../../platform/net/outbound-guard';
import { JobQueue } from '../../platform/queue';
import type { Worker } from '../../platform/worker';
import { DeliveryBatch, DeliveryScheduler } from './delivery-scheduler';
import { DeliverySweeper } from './delivery-sweeper';
import { DeliveryWorker } from './delivery-worker';
import { WebhookSender } from './webhook-sender';

export const DELIVERY_QUEUE = 'webhook-deliveries';

export function deliveryQueue(platform: Platform): JobQueue<DeliveryBatch> {
  return platform.jobQueue<DeliveryBatch>(DELIVERY_QUEUE);
}

/**
 * The worker role's share of webhooks: the queue consumer that attempts deliveries, and the sweeper
 * that re-queues overdue ones. The outbox relay that fans events out to deliveries is a worker of
 * its own (see app.ts).
 */
export class WebhookDelivery implements Worker {
  private readonly sender: WebhookSender;
  private readonly sweeper: DeliverySweeper;

  constructor(
    private readonly platform: Platform,
    private readonly scheduler: DeliveryScheduler,
    guard: OutboundGuard,
  ) {
    const { config, db, logger } = platform;
    this.sender = new WebhookSender(guard, config.WEBHOOK_TIMEOUT_MS);
    this.sweeper = new DeliverySweeper(db, scheduler, logger, config.WEBHOOK_SWEEP_INTERVAL_MS);
  }

  start(): void {
    const { config, db, logger } = this.platform;
    const worker = new DeliveryWorker(
      db,
      this.sender,
      this.platform.secretBox,
      this.scheduler,
      { retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_MS, leaseMs: config.WEBHOOK_LEASE_MS, deactivateAfterSeconds: config.WEBHOOK_DEACTIVATE_AFTER_SECONDS },
      logger,
      this.platform.metrics,
    );
    // WEBHOOK_CONCURRENCY counts jobs; each job holds up to 50 deliveries sent at once.
    deliveryQueue(this.platform).work(async (batch) => void (await Promise.all(batch.deliveries.map((d) => worker.attempt(d)))), {
      concurrency: config.WEBHOOK_CONCURRENCY,
      lockDurationMs: config.WEBHOOK_LEASE_MS,
      // A job's sends end within the webhook timeout; recording them waits for a connection at most its acquire timeout.
      stopWithinMs: config.WEBHOOK_TIMEOUT_MS + config.DB_ACQUIRE_TIMEOUT_MS,
    });
    this.sweeper.start();
  }

  /**
   * The consumer first, so no job is taken once the connector is closed, and the attempts running
   * are recorded before it closes; then the sweeper, then the connector.
   */
  async stop(): Promise<void> {
    await deliveryQueue(this.platform).stopWorking();
    this.sweeper.stop();
    await this.sender.close();
  }
}
