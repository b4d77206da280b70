import { Knex } from 'knex';
import type { Logger } from '../logger';
import type { EventEnvelope } from './outbox';
import type { Worker } from '../worker';

export interface RelayedEvent {
  sequence: string;
  organizationId: string | null;
  envelope: EventEnvelope;
  /** When the event's transaction recorded it (PostgreSQL's clock). */
  createdAt: Date;
}

/**
 * A consumer of committed events. `inTransaction` runs inside the transaction that marks the
 * batch dispatched (durable work, e.g. delivery rows); the function it returns runs after commit
 * (work that may be lost and redone, e.g. queueing and pub/sub).
 */
export interface OutboxConsumer {
  inTransaction(trx: Knex.Transaction, events: RelayedEvent[]): Promise<(() => Promise<void>) | void>;
}

/**
 * Moves committed outbox rows to their consumers, in sequence order, in batches. Several relays
 * may run against one database: each batch is claimed with SKIP LOCKED.
 */
export class OutboxRelay implements Worker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly db: Knex,
    private readonly consumers: OutboxConsumer[],
    private readonly logger: Logger,
    private readonly pollIntervalMs: number,
    private readonly batchSize = 500,
  ) {}

  start(): void {
    this.stopped = false;
    const loop = async () => {
      let moved = 0;
      try {
        moved = await this.relayOnce();
      } catch (error) {
        this.logger.error({ err: error }, 'outbox relay failed; retrying');
      }
      if (!this.stopped) this.timer = setTimeout(() => (this.running = loop()), moved === this.batchSize ? 0 : this.pollIntervalMs);
    };
    this.running = loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Relays one batch; returns how many events it moved. */
  async relayOnce(): Promise<number> {
    const afterCommit: (() => Promise<void>)[] = [];
    const count = await this.db.transaction(async (trx) => {
      const rows: RelayedEvent[] = await trx('outbox_events')
        .select('sequence', 'organizationId', 'envelope', 'createdAt')
        .whereNull('dispatchedAt')
        .orderBy('sequence')
        .limit(this.batchSize)
        .forUpdate()
        .skipLocked();
      if (!rows.length) return 0;
      for (const consumer of this.consumers) {
        const then = await consumer.inTransaction(trx, rows);
        if (then) afterCommit.push(then);
      }
      await trx('outbox_events')
        .whereIn('sequence', rows.map((r) => r.sequence))
        .update({ dispatchedAt: trx.fn.now() });
      return rows.length;
    });
    for (const then of afterCommit) {
      await then().catch((error) => this.logger.warn({ err: error }, 'post-commit outbox work failed; the sweeper will redo it'));
    }
    return count;
  }
}
