import IORedis from 'ioredis';
import { createPubSub, PubSub } from '@graphql-yoga/subscription';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import type { EventEnvelope } from './outbox';
import type { OutboxConsumer } from './outbox-relay';
import { filterIterator, SharedStream } from './shared-stream';

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
  private readonly shared = new Map<string, SharedStream<EventEnvelope>>();

  constructor(redisUrl: string, prefix: string) {
    // graphql-yoga's event target publishes, subscribes and unsubscribes without handling a rejection:
    // a command given up during a Redis outage (ioredis' 20 retries) would crash the process, so its
    // commands wait for Redis instead, and publish() drops events while Redis is away so none pile up.
    const publishClient = new IORedis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: null });
    const subscribeClient = new IORedis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: null });
    for (const c of [publishClient, subscribeClient]) c.on('error', () => undefined);
    this.clients = [publishClient, subscribeClient];
    this.pubSub = createPubSub({ eventTarget: createRedisEventTarget({ publishClient, subscribeClient }) }) as KeelPubSub;
    this.topic = `${prefix}events`;
  }

  publish(events: { organizationId: string | null; envelope: EventEnvelope }[]): void {
    if (this.clients[0].status !== 'ready') return;
    for (const e of events) if (e.organizationId) this.pubSub.publish(this.topic, e.organizationId, e.envelope);
  }

  /** Publishes each relayed batch once its transaction has committed. */
  relayConsumer(): OutboxConsumer {
    return { inTransaction: async (_trx, events) => async () => this.publish(events) };
  }

  /**
   * The organisation's events that pass `accept`, until the consumer stops iterating. One stream
   * per organisation on this node is shared by all its subscribers (each envelope is the same
   * object for all of them); each subscriber filters it.
   */
  stream(organizationId: string, accept: (envelope: EventEnvelope) => boolean): AsyncIterableIterator<EventEnvelope> {
    let shared = this.shared.get(organizationId);
    if (!shared) {
      const source = (this.pubSub.subscribe(this.topic, organizationId) as AsyncIterable<EventEnvelope>)[Symbol.asyncIterator]();
      const created = new SharedStream<EventEnvelope>(() => {
        if (this.shared.get(organizationId) === created) this.shared.delete(organizationId);
        void source.return?.();
      });
      this.shared.set(organizationId, created);
      void (async () => {
        for (;;) {
          const r = await source.next().catch(() => ({ done: true as const, value: undefined }));
          if (r.done) break;
          created.emit(r.value);
        }
        if (this.shared.get(organizationId) === created) this.shared.delete(organizationId);
        created.end();
      })();
      shared = created;
    }
    return filterIterator(shared.subscribe(), accept);
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.disconnect();
  }
}
