import { Knex } from 'knex';
import type { OutboxConsumer, RelayedEvent } from '../../platform/events/outbox-relay';
import { eventTypesCover } from '../../platform/events/catalogue';
import type { DeliveryScheduler } from './delivery-scheduler';

/**
 * Turns each committed event into one PENDING delivery per matching active subscription that
 * existed when the event was recorded: a subscription created while the relay lagged behind does
 * not receive the events from before it. Both times are PostgreSQL's clock.
 */
export class DeliveryFanout implements OutboxConsumer {
  constructor(private readonly scheduler: DeliveryScheduler) {}

  async inTransaction(trx: Knex.Transaction, events: RelayedEvent[]) {
    const organizationIds = [...new Set(events.map((e) => e.organizationId).filter((id): id is string => id !== null))];
    if (!organizationIds.length) return;
    const subscriptions: { id: string; organizationId: string; eventTypes: string[]; createdAt: Date }[] = await trx('webhook_subscriptions')
      .select('id', 'organizationId', 'eventTypes', 'createdAt')
      .whereIn('organizationId', organizationIds)
      .andWhere({ isActive: true });
    const rows = [];
    for (const event of events) {
      for (const s of subscriptions) {
        if (s.organizationId !== event.organizationId || s.createdAt > event.createdAt || !eventTypesCover(s.eventTypes, event.envelope.type)) continue;
        rows.push({
          organizationId: s.organizationId,
          subscriptionId: s.id,
          eventId: event.envelope.id,
          eventSequence: event.sequence,
          type: event.envelope.type,
          payload: JSON.stringify(event.envelope),
          nextAttemptAt: trx.fn.now(),
        });
      }
    }
    if (!rows.length) return;
    const created: { id: string; attempts: number; nextAttemptAt: Date }[] = [];
    for (let i = 0; i < rows.length; i += 1_000) {
      created.push(
        ...(await trx('webhook_deliveries')
          .insert(rows.slice(i, i + 1_000))
          .onConflict(['subscriptionId', 'eventId'])
          .ignore()
          .returning(['id', 'attempts', 'nextAttemptAt'])),
      );
    }
    return () => this.scheduler.schedule(created);
  }
}
