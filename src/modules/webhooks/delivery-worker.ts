import { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import type { Metrics } from '../../platform/metrics';
import type { WebhookSender } from './webhook-sender';
import { signatureHeaders } from './webhook-signing';
import type { DeliveryJob, DeliveryScheduler } from './delivery-scheduler';

export interface DeliveryPolicy {
  /** Delay before each attempt, first to last; its length is the number of attempts. */
  retryScheduleMs: number[];
  /** How long an attempt is leased to one worker; a crashed worker's attempt is retried after it. */
  leaseMs: number;
  /** A subscription failing for longer than this is deactivated. */
  deactivateAfterSeconds: number;
}

interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  eventId: string;
  payload: unknown;
  attempts: number;
  url: string;
  isActive: boolean;
}

/**
 * Runs one delivery attempt: lease it in PostgreSQL (so a duplicate job cannot send twice at
 * once), POST the signed body, record the outcome and schedule the next attempt.
 */
export class DeliveryWorker {
  constructor(
    private readonly db: Knex,
    private readonly sender: WebhookSender,
    private readonly scheduler: DeliveryScheduler,
    private readonly policy: DeliveryPolicy,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {}

  async attempt(job: DeliveryJob): Promise<void> {
    const claimed = await this.claim(job);
    if (!claimed) return;
    if (!claimed.isActive) {
      await this.db('webhook_deliveries')
        .where({ id: claimed.id })
        .update({ status: 'FAILED', errorMessage: 'subscription is inactive', nextAttemptAt: null, leaseUntil: null, updatedAt: this.db.fn.now() });
      return;
    }
    const secrets: string[] = await this.db('webhook_secrets')
      .where({ subscriptionId: claimed.subscriptionId })
      .where((q) => q.whereNull('expiresAt').orWhere('expiresAt', '>', this.db.fn.now()))
      .orderBy('id', 'desc')
      .pluck('secret');
    const body = JSON.stringify(claimed.payload);
    const startedAt = new Date();
    const result = await this.sender.send(claimed.url, body, signatureHeaders(secrets, claimed.eventId, body, startedAt));
    await this.record(claimed, startedAt, result);
  }

  private async claim(job: DeliveryJob): Promise<ClaimedDelivery | null> {
    const { rows } = await this.db.raw(
      `UPDATE webhook_deliveries d
          SET lease_until = now() + (? * interval '1 millisecond')
         FROM webhook_subscriptions s
        WHERE d.id = ? AND s.id = d.subscription_id AND d.attempts = ?
          AND d.next_attempt_at IS NOT NULL AND d.next_attempt_at <= now() + interval '1 second'
          AND (d.lease_until IS NULL OR d.lease_until < now())
      RETURNING d.id, d.subscription_id AS "subscriptionId", d.event_id AS "eventId", d.payload, d.attempts, s.url, s.is_active AS "isActive"`,
      [this.policy.leaseMs, job.deliveryId, job.attempts],
    );
    return (rows[0] as ClaimedDelivery | undefined) ?? null;
  }

  private async record(delivery: ClaimedDelivery, startedAt: Date, result: Awaited<ReturnType<WebhookSender['send']>>): Promise<void> {
    const attempts = delivery.attempts + 1;
    const schedule = this.policy.retryScheduleMs;
    const gone = result.statusCode === 410;
    const nextAttemptAt = result.ok || gone || attempts >= schedule.length ? null : new Date(Date.now() + schedule[attempts]);
    const next = await this.db.transaction(async (trx) => {
      const [row] = await trx('webhook_deliveries')
        .where({ id: delivery.id, attempts: delivery.attempts })
        .update({
          status: result.ok ? 'SUCCESS' : 'FAILED',
          attempts,
          responseStatusCode: result.statusCode,
          errorMessage: result.errorMessage,
          nextAttemptAt,
          leaseUntil: null,
          lastAttemptAt: startedAt,
          deliveredAt: result.ok ? trx.fn.now() : null,
          updatedAt: trx.fn.now(),
        })
        .returning(['id', 'attempts', 'nextAttemptAt']);
      if (!row) return null; // another worker recorded this attempt after our lease ran out
      await trx('webhook_delivery_attempts')
        .insert({ deliveryId: delivery.id, attempt: attempts, startedAt, durationMs: result.durationMs, responseStatusCode: result.statusCode, errorMessage: result.errorMessage })
        .onConflict(['deliveryId', 'attempt'])
        .ignore();
      await this.updateHealth(trx, delivery.subscriptionId, result.ok, gone);
      return row;
    });
    this.metrics?.webhookAttempts.inc({ outcome: result.ok ? 'success' : 'failure' });
    if (next?.nextAttemptAt) await this.scheduler.schedule([next]);
  }

  /** Tracks how long a subscription has been failing; deactivates it on 410 Gone or after too long. */
  private async updateHealth(trx: Knex.Transaction, subscriptionId: string, ok: boolean, gone: boolean): Promise<void> {
    if (ok) {
      await trx('webhook_subscriptions').where({ id: subscriptionId }).whereNotNull('failingSince').update({ failingSince: null });
      return;
    }
    const [subscription] = await trx('webhook_subscriptions')
      .where({ id: subscriptionId })
      .update({ failingSince: trx.raw('coalesce(failing_since, now())') })
      .returning(['failingSince', 'isActive']);
    if (!subscription?.isActive) return;
    const failingFor = (Date.now() - new Date(subscription.failingSince).getTime()) / 1000;
    const reason = gone
      ? 'the receiver answered 410 Gone'
      : failingFor > this.policy.deactivateAfterSeconds
        ? `every delivery failed for more than ${this.policy.deactivateAfterSeconds} seconds`
        : null;
    if (!reason) return;
    await trx('webhook_subscriptions').where({ id: subscriptionId }).update({ isActive: false, deactivatedAt: trx.fn.now(), deactivationReason: reason, updatedAt: trx.fn.now() });
    await trx('webhook_deliveries')
      .where({ subscriptionId })
      .whereNotNull('nextAttemptAt')
      .update({ status: 'FAILED', nextAttemptAt: null, errorMessage: `subscription deactivated: ${reason}`, updatedAt: trx.fn.now() });
    this.logger.warn({ subscriptionId, reason }, 'webhook subscription deactivated');
  }
}
