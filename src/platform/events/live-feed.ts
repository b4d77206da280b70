import IORedis from 'ioredis';
import { createPubSub, PubSub } from '@graphql-yoga/subscription';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import type { EventEnvelope } from './outbox';
import type { OutboxConsumer } from './outbox-relay';

export type KeelPubSub = PubSub<Record<string, [string, EventEnvelope] | [EventEnvelope]>>;

/**
 * Committed events fanned out to every node over Redis pub/sub (GraphQL Yoga's pub/sub with its
 * Redis event target), for live GraphQL subscriptions. Best effort by nature: a client that needs
 * every event uses webhooks or the delivery log.
 */
export class LiveEventFeed {
  readonly pubSub: KeelPubSub;
  readonly topic: string;
  private readonly clients: IORedis[];

  constructor(redisUrl: string, prefix: string) {
    const publishClient = new IORedis(redisUrl, { lazyConnect: false });
    const subscribeClient = new IORedis(redisUrl, { lazyConnect: false });
    for (const c of [publishClient, subscribeClient]) c.on('error', () => undefined);
    this.clients = [publishClient, subscribeClient];
    this.pubSub = createPubSub({ eventTarget: createRedisEventTarget({ publishClient, subscribeClient }) }) as KeelPubSub;
    this.topic = `${prefix}events`;
  }

  publish(events: { organizationId: string | null; envelope: EventEnvelope }[]): void {
    for (const e of events) if (e.organizationId) this.pubSub.publish(this.topic, e.organizationId, e.envelope);
  }

  /** Publishes each relayed batch once its transaction has committed. */
  relayConsumer(): OutboxConsumer {
    return { inTransaction: async (_trx, events) => async () => this.publish(events) };
  }

  /** The organisation's events that pass `accept`, until the consumer stops iterating. */
  async *stream(organizationId: string, accept: (envelope: EventEnvelope) => boolean): AsyncGenerator<EventEnvelope> {
    for await (const envelope of this.pubSub.subscribe(this.topic, organizationId) as AsyncIterable<EventEnvelope>) {
      if (accept(envelope)) yield envelope;
    }
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.disconnect();
  }
}
