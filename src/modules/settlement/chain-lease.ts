import { Knex } from 'knex';

/** The chain's lease lapsed or another worker took it: what its former holder was about to do is not done. */
export class LeaseLost extends Error {}

/**
 * What settlement work checks before it changes anything: `hold` inside each state change's
 * transaction (the change commits only under the lease, and a worker taking the lease over waits
 * for it), `renew` between phases and before every broadcast (the lease is still held, with at least
 * two thirds of its time left). Both throw LeaseLost.
 */
export interface Fence {
  hold(trx: Knex.Transaction): Promise<void>;
  renew(): Promise<void>;
}

/** For work outside the settlement worker (a command, funding ahead of a batch): nothing to hold. */
export const UNFENCED: Fence = { hold: async () => undefined, renew: async () => undefined };

/**
 * A worker's holding of one chain's settlement lease (settlement_leases), under a fencing token
 * that grows with every taking: a worker paused past its lease holds an old token, and each of its
 * later state changes is refused, even once it believes it renewed.
 *
 * The holder keeps it from step to step and writes a new expiry only once a third of the lease has
 * passed since the last one was sent (measured on this process's monotonic clock, so a pause counts):
 * until then nobody else can have taken it, as a lease is only taken once lapsed, and an idle chain's
 * steps write nothing.
 */
export class ChainLease implements Fence {
  private constructor(
    private readonly db: Knex,
    private readonly blockchainId: string,
    private readonly holder: string,
    readonly token: string,
    private readonly leaseMs: number,
    /** performance.now() when the expiry now in force was sent. */
    private renewedAt: number,
  ) {}

  /** Takes the lease when it is free, lapsed or this holder's (a new token either way); null while another holds it. */
  static async take(db: Knex, blockchainId: string, holder: string, leaseMs: number): Promise<ChainLease | null> {
    const sent = performance.now();
    const { rows } = await db.raw(
      `INSERT INTO settlement_leases (blockchain_id, holder, expires_at, token) VALUES (?, ?, clock_timestamp() + ? * interval '1 millisecond', 1)
       ON CONFLICT (blockchain_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, token = settlement_leases.token + 1
        WHERE settlement_leases.holder = EXCLUDED.holder OR settlement_leases.expires_at < clock_timestamp()
       RETURNING token::text`,
      [blockchainId, holder, leaseMs],
    );
    return rows.length ? new ChainLease(db, blockchainId, holder, rows[0].token, leaseMs, sent) : null;
  }

  private current(db: Knex | Knex.Transaction): Knex.QueryBuilder {
    return db('settlement_leases').where({ blockchainId: this.blockchainId, holder: this.holder, token: this.token }).where('expiresAt', '>', db.raw('clock_timestamp()'));
  }

  async hold(trx: Knex.Transaction): Promise<void> {
    if (!(await this.current(trx).forShare().first())) throw this.lost();
  }

  async renew(): Promise<void> {
    const sent = performance.now();
    if (sent - this.renewedAt < this.leaseMs / 3) return;
    const renewed = await this.current(this.db).update({ expiresAt: this.db.raw(`clock_timestamp() + ? * interval '1 millisecond'`, [this.leaseMs]) });
    if (!renewed) throw this.lost();
    this.renewedAt = sent;
  }

  private lost(): LeaseLost {
    return new LeaseLost(`settlement lease of chain ${this.blockchainId} (token ${this.token}) is no longer held`);
  }
}

/** A transaction that commits only while `lease` is held. */
export function fencedTransaction<T>(db: Knex, lease: Fence, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await lease.hold(trx);
    return work(trx);
  });
}
