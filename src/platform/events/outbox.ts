import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';

/** The spec's event envelope. `data` is event-specific. */
export interface EventEnvelope<T = Record<string, unknown>> {
  id: string;
  type: string;
  version: string;
  timestamp: string;
  environment: string;
  data: T;
}

export interface PublishInput<T> {
  organizationId: string | null;
  type: string;
  data: T;
}

export const EVENT_VERSION = '1.0';

/**
 * The outbox: an event becomes real only when the transaction that caused it commits.
 * Dispatchers (webhooks, subscriptions) read from here; nothing publishes from inside a transaction.
 */
export class Outbox {
  constructor(private readonly environment: string) {}

  async publish<T extends object>(trx: Knex.Transaction | Knex, input: PublishInput<T>): Promise<EventEnvelope<T>> {
    const envelope: EventEnvelope<T> = {
      id: randomUUID(),
      type: input.type,
      version: EVENT_VERSION,
      timestamp: new Date().toISOString(),
      environment: this.environment === 'production' ? 'prod' : 'sandbox',
      data: input.data,
    };
    await trx('outbox_events').insert({
      id: envelope.id,
      organizationId: input.organizationId,
      type: envelope.type,
      envelope: JSON.stringify(envelope),
    });
    return envelope;
  }
}
