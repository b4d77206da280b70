import IORedis from 'ioredis';
import { withinMs } from '../time-bound';

type Handler = (message: string) => void;

/**
 * One Redis pub/sub channel that carries realtime messages between the nodes. Publishing never
 * waits and never queues while Redis is away (no offline queue): a message that cannot be sent
 * is dropped and counted, so a Redis outage stops the feeds but never slows the work that
 * publishes. Subscribing starts with the first handler.
 */
export class RealtimeBus {
  private readonly publisher: IORedis;
  private subscriber?: IORedis;
  private subscribed: Promise<unknown> = Promise.resolve();
  private readonly handlers = new Set<Handler>();
  private readonly resumedHandlers = new Set<() => void>();
  /** Messages dropped because Redis could not take them. */
  dropped = 0;

  constructor(
    private readonly redisUrl: string,
    readonly channel: string,
  ) {
    this.publisher = new IORedis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: false });
    this.publisher.on('error', () => undefined);
  }

  publish(message: string): void {
    if (this.publisher.status !== 'ready') {
      this.dropped++;
      return;
    }
    this.publisher.publish(this.channel, message).catch(() => this.dropped++);
  }

  /** Calls `handler` with every message any node publishes from now on; the returned function stops it. */
  onMessage(handler: Handler): () => void {
    if (!this.subscriber) {
      const sub = new IORedis(this.redisUrl, { lazyConnect: false, connectionName: `keel-realtime:${this.channel}` });
      sub.on('error', () => undefined);
      let connectedBefore = false;
      sub.on('ready', () => {
        if (!connectedBefore) {
          connectedBefore = true;
          return;
        }
        // Back after losing Redis: ioredis subscribes again itself; once that subscription is live,
        // whatever was published meanwhile is known to be lost to this node.
        sub.subscribe(this.channel).then(
          () => {
            for (const h of this.resumedHandlers) h();
          },
          () => undefined,
        );
      });
      sub.on('message', (_channel: string, message: string) => {
        for (const h of this.handlers) h(message);
      });
      this.subscribed = sub.subscribe(this.channel).catch(() => undefined);
      this.subscriber = sub;
    }
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /**
   * Calls `handler` each time this node hears the channel again after losing its connection to
   * Redis: messages published while it was away never reach it. The returned function stops it.
   */
  onResumed(handler: () => void): () => void {
    this.resumedHandlers.add(handler);
    return () => this.resumedHandlers.delete(handler);
  }

  /** Resolves once this node's subscription is live (messages published later reach it), or after `withinMs` if Redis is away. */
  async ready(ms = 2_000): Promise<void> {
    await withinMs(this.subscribed, ms, 'Redis (realtime subscription)').catch(() => undefined);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.resumedHandlers.clear();
    this.publisher.disconnect();
    this.subscriber?.disconnect();
  }
}
