import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../platform/redis';

type ChangeListener = (marketId: string) => Promise<void> | void;

/**
 * A market's rules or status changed: the listeners of this process run at once, and every other
 * Keel process (other nodes, or the one an operator's `keel market update` ran in) hears it over
 * Redis pub/sub, so no engine keeps trading on the old rules or past a halt.
 */
export class MarketChanges {
  private readonly listeners: ChangeListener[] = [];
  /** Tells this process's own messages apart: its listeners have already run. */
  private readonly origin = randomUUID();
  private subscriber?: RedisClient;

  constructor(
    private readonly redis: RedisClient,
    private readonly channel: string,
  ) {}

  on(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  async announce(marketId: string): Promise<void> {
    await this.notify(marketId);
    await this.redis.publish(this.channel, `${this.origin} ${marketId}`);
  }

  /** Hears other processes' changes (processes that trade call it; a one-off command need not). */
  async listen(): Promise<void> {
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('error', () => undefined);
    await this.subscriber.connect();
    await this.subscriber.subscribe(this.channel, (message) => {
      const [origin, marketId] = message.split(' ');
      if (origin !== this.origin && marketId) void this.notify(marketId);
    });
  }

  async close(): Promise<void> {
    if (this.subscriber?.isOpen) await this.subscriber.quit();
  }

  private async notify(marketId: string): Promise<void> {
    for (const listener of this.listeners) await listener(marketId);
  }
}
