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

/** PostgreSQL's channel on which a committed statement recording events notifies (migration 051). */
export const OUTBOX_CHANNEL = 'keel_outbox';

/** Where the relay hears that events were committed (this process's own session). */
export interface CommitNotifications {
  /** Whether notifications are heard now. */
  readonly listening: boolean;
  /** Calls `heard` on each notification, and when notifications are heard again after a break. */
  listen(channel: string, heard: () => void): () => void;
}

export interface OutboxRelayTiming {
  /** How long the relay waits before looking again while it hears no notifications. */
  pollIntervalMs: number;
  /** How long it waits while it hears them: a look now and then in case one went astray. */
  listeningPollIntervalMs: number;
}

/**
 * Moves committed outbox rows to their consumers, in sequence order, in batches. Several relays
 * may run against one database: each batch is claimed with SKIP LOCKED.
 * It moves events as soon as PostgreSQL notifies their commit: a notification heard during a batch
 * brings one more batch right after it, so a stream of events is moved in batches of what arrived
 * meanwhile, never two at once. While notifications are not heard (the session is reconnecting)
 * it looks every `pollIntervalMs`; while they are, every `listeningPollIntervalMs` only.
 */
export class OutboxRelay implements Worker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private unlisten?: () => void;

  constructor(
    private readonly db: Knex,
    private readonly consumers: OutboxConsumer[],
    private readonly logger: Logger,
    private readonly timing: OutboxRelayTiming,
    private readonly notifications?: CommitNotifications,
    private readonly batchSize = 500,
  ) {}

  start(): void {
    this.stopped = false;
    this.unlisten = this.notifications?.listen(OUTBOX_CHANNEL, () => this.wake());
    this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.run();
  }

  private run(): void {
    this.timer = null;
    this.again = false;
    this.running = (async () => {
      let moved = 0;
      let failed = false;
      try {
        moved = await this.relayOnce();
      } catch (error) {
        failed = true;
        this.logger.error({ err: error }, 'outbox relay failed; retrying');
      }
      this.running = null;
      if (this.stopped) return;
      // A failed batch is tried again after the short interval, however many notifications came meanwhile.
      const more = !failed && (moved === this.batchSize || this.again);
      const wait = more ? 0 : failed || !this.notifications?.listening ? this.timing.pollIntervalMs : this.timing.listeningPollIntervalMs;
      this.timer = setTimeout(() => this.run(), wait);
    })();
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
