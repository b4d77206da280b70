import DataLoader from 'dataloader';
import { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import type { Metrics } from '../../platform/metrics';
import type { SecretBox } from '../../platform/crypto/secret-box';
import { ConnectorClosed } from '../../platform/net/guarded-http';
import type { SendResult, WebhookSender } from './webhook-sender';
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
  sealedSecrets: string[];
}

interface Outcome {
  delivery: ClaimedDelivery;
  startedAt: Date;
  result: SendResult;
}

interface DueAttempt {
  id: string;
  attempts: number;
  nextAttemptAt: Date | null;
}

/** Concurrent attempts share their database round trips: claims and outcomes are written in batches. */
const BATCH = { cache: false, maxBatchSize: 250, batchScheduleFn: (flush: () => void) => setTimeout(flush, 2) };

/**
 * Runs delivery attempts: lease each in PostgreSQL (so a duplicate job cannot send twice at once),
 * POST the signed body, record the outcome (committed before the job completes) and schedule the
 * next attempt.
 */
export class DeliveryWorker {
  private readonly claims = new DataLoader<DeliveryJob, ClaimedDelivery | null>((jobs) => this.claimBatch(jobs), BATCH);
  private readonly outcomes = new DataLoader<Outcome, void>((batch) => this.recordBatch(batch), BATCH);

  constructor(
    private readonly db: Knex,
    private readonly sender: WebhookSender,
    private readonly box: SecretBox,
    private readonly scheduler: DeliveryScheduler,
    private readonly policy: DeliveryPolicy,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {}

  async attempt(job: DeliveryJob): Promise<void> {
    const delivery = await this.claims.load(job);
    if (!delivery) return;
    if (!delivery.isActive) {
      await this.db('webhook_deliveries')
        .where({ id: delivery.id })
        .update({ status: 'FAILED', errorMessage: 'subscription is inactive', nextAttemptAt: null, leaseUntil: null, updatedAt: this.db.fn.now() });
      return;
    }
    const body = JSON.stringify(delivery.payload);
    const startedAt = new Date();
    const secrets = delivery.sealedSecrets.map((sealed) => this.box.open(sealed, delivery.subscriptionId));
    let result: SendResult;
    try {
      result = await this.sender.send(delivery.url, body, signatureHeaders(secrets, delivery.eventId, body, startedAt));
    } catch (error) {
      if (error instanceof ConnectorClosed) return this.release(delivery);
      throw error;
    }
    this.metrics?.webhookAttempts.inc({ outcome: result.ok ? 'success' : 'failure' });
    await this.outcomes.load({ delivery, startedAt, result });
  }

  /** Not attempted (the process is stopping): the delivery is due again at once, its attempts uncounted. */
  private async release(delivery: ClaimedDelivery): Promise<void> {
    await this.db('webhook_deliveries').where({ id: delivery.id, attempts: delivery.attempts }).update({ leaseUntil: null });
  }

  private async claimBatch(jobs: readonly DeliveryJob[]): Promise<(ClaimedDelivery | null)[]> {
    const { rows } = await this.db.raw(
      `UPDATE webhook_deliveries d
          SET lease_until = now() + (? * interval '1 millisecond')
         FROM webhook_subscriptions s, unnest(?::uuid[], ?::int[]) AS j(id, attempts)
        WHERE d.id = j.id AND d.attempts = j.attempts AND s.id = d.subscription_id
          AND d.next_attempt_at IS NOT NULL AND d.next_attempt_at <= now() + interval '1 second'
          AND (d.lease_until IS NULL OR d.lease_until < now())
      RETURNING d.id, d.subscription_id AS "subscriptionId", d.event_id AS "eventId", d.payload, d.attempts, s.url, s.is_active AS "isActive",
        ARRAY(SELECT w.sealed_secret FROM webhook_secrets w
               WHERE w.subscription_id = d.subscription_id AND (w.expires_at IS NULL OR w.expires_at > now())
               ORDER BY w.id DESC) AS "sealedSecrets"`,
      [this.policy.leaseMs, jobs.map((j) => j.deliveryId), jobs.map((j) => j.attempts)],
    );
    const claimed = new Map((rows as ClaimedDelivery[]).map((r) => [r.id, r]));
    // Two jobs for the same attempt in one batch: only the first sends.
    return jobs.map((j) => {
      const row = claimed.get(j.deliveryId) ?? null;
      claimed.delete(j.deliveryId);
      return row;
    });
  }

  /**
   * One transaction for the batch, which holds outcomes of many organisations; should it fail, each
   * outcome is written alone, so one that cannot be written does not hold back the others.
   */
  private async recordBatch(outcomes: readonly Outcome[]): Promise<(void | Error)[]> {
    const results: (void | Error)[] = outcomes.map(() => undefined);
    const due: DueAttempt[] = [];
    try {
      due.push(...(await this.record(outcomes)));
    } catch (error) {
      if (outcomes.length === 1) throw error;
      // One at a time: the batch may be larger than the pool.
      for (const [i, outcome] of outcomes.entries()) {
        try {
          due.push(...(await this.record([outcome])));
        } catch (err) {
          this.logger.error({ err, deliveryId: outcome.delivery.id }, 'webhook delivery outcome not recorded');
          results[i] = err as Error;
        }
      }
    }
    await this.scheduler.schedule(due);
    return results;
  }

  /** Writes the outcomes in one transaction; returns the attempts they make due again. */
  private async record(outcomes: readonly Outcome[]): Promise<DueAttempt[]> {
    const schedule = this.policy.retryScheduleMs;
    const rows = outcomes.map(({ delivery, startedAt, result }) => {
      const attempts = delivery.attempts + 1;
      const final = result.ok || result.statusCode === 410 || attempts >= schedule.length;
      return { id: delivery.id, previous: delivery.attempts, status: result.ok ? 'SUCCESS' : 'FAILED', code: result.statusCode, error: result.errorMessage, nextAt: final ? null : new Date(Date.now() + schedule[attempts]), startedAt, durationMs: result.durationMs, ok: result.ok };
    });
    return this.db.transaction(async (trx) => {
      const { rows: updated } = await trx.raw(
        `UPDATE webhook_deliveries d
            SET status = v.status, attempts = v.previous + 1, response_status_code = v.code, error_message = v.error,
                next_attempt_at = v.next_at, lease_until = NULL, last_attempt_at = v.started_at,
                delivered_at = CASE WHEN v.ok THEN now() END, updated_at = now()
           FROM unnest(?::uuid[], ?::int[], ?::text[], ?::int[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::boolean[])
                AS v(id, previous, status, code, error, next_at, started_at, ok)
          WHERE d.id = v.id AND d.attempts = v.previous
      RETURNING d.id, d.attempts, d.next_attempt_at AS "nextAttemptAt"`,
        ['id', 'previous', 'status', 'code', 'error', 'nextAt', 'startedAt', 'ok'].map((k) => rows.map((r) => r[k as keyof typeof r])) as unknown as Knex.RawBinding[],
      );
      // A row not updated was recorded by another worker after our lease ran out.
      const recorded = new Set((updated as { id: string }[]).map((u) => u.id));
      const mine = rows.filter((r) => recorded.has(r.id));
      if (mine.length) {
        await trx('webhook_delivery_attempts')
          .insert(mine.map((r) => ({ deliveryId: r.id, attempt: r.previous + 1, startedAt: r.startedAt, durationMs: r.durationMs, responseStatusCode: r.code, errorMessage: r.error })))
          .onConflict(['deliveryId', 'attempt'])
          .ignore();
      }
      await this.updateHealth(trx, outcomes.filter((o) => recorded.has(o.delivery.id)));
      return (updated as DueAttempt[]).filter((d) => d.nextAttemptAt);
    });
  }

  /** Tracks how long each subscription has been failing; deactivates it on 410 Gone or after too long. */
  private async updateHealth(trx: Knex.Transaction, outcomes: Outcome[]): Promise<void> {
    const healthy = [...new Set(outcomes.filter((o) => o.result.ok).map((o) => o.delivery.subscriptionId))];
    if (healthy.length) await trx('webhook_subscriptions').whereIn('id', healthy).whereNotNull('failingSince').update({ failingSince: null });
    const failing = new Map<string, boolean>();
    for (const o of outcomes) {
      if (!o.result.ok) failing.set(o.delivery.subscriptionId, (failing.get(o.delivery.subscriptionId) ?? false) || o.result.statusCode === 410);
    }
    for (const [subscriptionId, gone] of failing) await this.recordFailure(trx, subscriptionId, gone);
  }

  private async recordFailure(trx: Knex.Transaction, subscriptionId: string, gone: boolean): Promise<void> {
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
