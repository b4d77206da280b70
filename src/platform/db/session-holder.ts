import { randomInt } from 'node:crypto';
import { Client } from 'pg';
import type { Logger } from '../logger';

/** The first key of the advisory locks that mark live Keel processes (two-key form; 'keel' in ASCII). */
export const LIVE_PROCESS_LOCK_CLASS = 0x6b65656c;

/**
 * SQL true while the process whose holder id is `holderColumn` is alive: its session still holds
 * its advisory lock in this database. PostgreSQL drops a session's locks the moment the session
 * ends, and a killed process's session ends with it (the kernel closes its socket), so a dead
 * process's holder id reads as not alive within milliseconds. Readable by any role (pg_locks).
 */
export function holderAliveSql(holderColumn: string): string {
  return `EXISTS (SELECT 1 FROM pg_locks l
                   WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                     AND l.classid = ${LIVE_PROCESS_LOCK_CLASS}::oid AND l.objid = ${holderColumn}::oid
                     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))`;
}

/**
 * This process's own session in PostgreSQL: one connection of its own (outside the pool), its mark of
 * life, and where it hears PostgreSQL's notifications (`listen`).
 * The mark of life is a session-level advisory lock (LIVE_PROCESS_LOCK_CLASS, id) held for as long as the process lives.
 * Work that claims something in the database (an idempotency key) records `id`, and another process
 * may take the claim over as soon as that lock is gone (`holderAliveSql`), instead of waiting out a
 * timeout. When the connection breaks (PostgreSQL restarted, the backend terminated), `id` is null
 * until a new connection holds a new id; claims made meanwhile fall back to their timeout.
 */
export class SessionHolder {
  private client?: Client;
  private current: number | null = null;
  private closed = false;
  private retry?: NodeJS.Timeout;
  private readonly listeners = new Map<string, Set<() => void>>();

  private constructor(
    private readonly databaseUrl: string,
    private readonly retryMs: number,
    private readonly logger?: Logger,
  ) {}

  /** Connects and takes an id; a failure is logged and retried in the background (id null meanwhile). */
  static async open(databaseUrl: string, opts: { retryMs?: number; logger?: Logger } = {}): Promise<SessionHolder> {
    const holder = new SessionHolder(databaseUrl, opts.retryMs ?? 1_000, opts.logger);
    await holder.connect();
    return holder;
  }

  /** The id this process's live session holds; null while it has none. */
  get id(): number | null {
    return this.current;
  }

  /** Whether notifications are heard now (the session is connected and listening). */
  get listening(): boolean {
    return this.current !== null;
  }

  /**
   * Calls `heard` on each notification on `channel`, and each time the session connects again (what
   * was notified while it was away is lost, so the listener looks for itself). Returns the way to stop.
   */
  listen(channel: string, heard: () => void): () => void {
    let set = this.listeners.get(channel);
    if (!set) {
      this.listeners.set(channel, (set = new Set()));
      this.client?.query(`LISTEN ${quoteIdentifier(channel)}`).catch(() => undefined);
    }
    set.add(heard);
    return () => void set.delete(heard);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.current = null;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ connectionString: this.databaseUrl, keepAlive: true, application_name: 'keel-session-holder' });
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.current = null;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.logger?.warn({ err: error }, 'the live-process session to PostgreSQL was lost; idempotency claims fall back to IDEMPOTENCY_LOCK_SECONDS until it is back');
      this.scheduleRetry();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', ({ channel }) => this.listeners.get(channel)?.forEach((heard) => heard()));
    this.client = client;
    try {
      await client.connect();
      // A random id, kept only if no live session holds it already.
      for (;;) {
        const id = randomInt(1, 2 ** 31 - 1);
        const { rows } = await client.query('SELECT pg_try_advisory_lock($1, $2) AS taken', [LIVE_PROCESS_LOCK_CLASS, id]);
        if (rows[0].taken) {
          for (const channel of this.listeners.keys()) await client.query(`LISTEN ${quoteIdentifier(channel)}`);
          if (this.client !== client || this.closed) return;
          this.current = id;
          for (const set of this.listeners.values()) set.forEach((heard) => heard());
          return;
        }
      }
    } catch (error) {
      lost(error as Error);
    }
  }

  private scheduleRetry(): void {
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(), this.retryMs);
    this.retry.unref();
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
