import type { RedisClient } from './redis';

/**
 * A Redis pub/sub channel between the nodes of a deployment. Listening takes a connection of its
 * own (a subscribed connection can do nothing else). Messages are hints that let a node act at
 * once; nothing may depend on them arriving, since a node that is reconnecting misses them.
 */
export class RedisChannel {
  private subscriber?: RedisClient;

  constructor(
    private readonly redis: RedisClient,
    readonly name: string,
  ) {}

  async listen(onMessage: (message: string) => void): Promise<void> {
    if (this.subscriber) return;
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('error', () => undefined);
    await this.subscriber.connect();
    await this.subscriber.subscribe(this.name, onMessage);
  }

  async close(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    // Nothing it sent awaits a reply worth having, and with Redis down QUIT would wait for Redis forever.
    if (subscriber?.isOpen) subscriber.destroy();
  }

  /** Publishes without waiting: while Redis is away the command would queue until it is back. */
  announce(message: string): void {
    this.redis.publish(this.name, message).catch(() => undefined);
  }
}
