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
    const [envelope] = await this.publishMany(trx, [input]);
    return envelope;
  }

  /** Several events in one insert, in the order given. */
  async publishMany<T extends object>(trx: Knex.Transaction | Knex, inputs: PublishInput<T>[]): Promise<EventEnvelope<T>[]> {
    const environment = this.environment === 'production' ? 'prod' : 'sandbox';
    const timestamp = new Date().toISOString();
    const envelopes = inputs.map((input): EventEnvelope<T> => ({ id: randomUUID(), type: input.type, version: EVENT_VERSION, timestamp, environment, data: input.data }));
    if (envelopes.length) {
      await trx('outbox_events').insert(
        envelopes.map((envelope, i) => ({ id: envelope.id, organizationId: inputs[i].organizationId, type: envelope.type, envelope: JSON.stringify(envelope) })),
      );
    }
    return envelopes;
  }
}
