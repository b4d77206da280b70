import type { Platform } from '../../platform/platform';
import { OutboxRelay } from '../../platform/events/outbox-relay';
import { OutboundGuard } from '../../platform/net/outbound-guard';
import { JobQueue } from '../../platform/queue';
import { DeliveryBatch, DeliveryScheduler } from './delivery-scheduler';
import { DeliveryFanout } from './delivery-fanout';
import { DeliverySweeper } from './delivery-sweeper';
import { DeliveryWorker } from './delivery-worker';
import { WebhookSender } from './webhook-sender';

export const DELIVERY_QUEUE = 'webhook-deliveries';

export function deliveryQueue(platform: Platform): JobQueue<DeliveryBatch> {
  return platform.jobQueue<DeliveryBatch>(DELIVERY_QUEUE);
}

export interface RunningDelivery {
  relay: OutboxRelay;
  sweeper: DeliverySweeper;
  stop(): Promise<void>;
}

/**
 * The worker role's share of webhooks: the outbox relay (fan-out to deliveries and to the live
 * feed), the queue consumer that attempts deliveries, and the sweeper that re-queues overdue ones.
 */
export function startWebhookDelivery(platform: Platform): RunningDelivery {
  const { config, db, logger } = platform;
  const queue = deliveryQueue(platform);
  const scheduler = new DeliveryScheduler(queue);
  const sender = new WebhookSender(new OutboundGuard(config.WEBHOOKS_ALLOW_PRIVATE_URLS), config.WEBHOOK_TIMEOUT_MS);
  const worker = new DeliveryWorker(
    db,
    sender,
    platform.secretBox,
    scheduler,
    { retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_MS, leaseMs: config.WEBHOOK_LEASE_MS, deactivateAfterSeconds: config.WEBHOOK_DEACTIVATE_AFTER_SECONDS },
    logger,
    platform.metrics,
  );
  // WEBHOOK_CONCURRENCY counts jobs; each job holds up to 50 deliveries sent at once.
  queue.work(async (batch) => void (await Promise.all(batch.deliveries.map((d) => worker.attempt(d)))), {
    concurrency: config.WEBHOOK_CONCURRENCY,
    lockDurationMs: config.WEBHOOK_LEASE_MS,
  });
  const relay = new OutboxRelay(db, [new DeliveryFanout(scheduler), platform.liveFeed.relayConsumer()], logger, config.OUTBOX_POLL_INTERVAL_MS);
  const sweeper = new DeliverySweeper(db, scheduler, logger, config.WEBHOOK_SWEEP_INTERVAL_MS);
  relay.start();
  sweeper.start();
  return {
    relay,
    sweeper,
    async stop() {
      sweeper.stop();
      await relay.stop();
      await sender.close();
    },
  };
}
