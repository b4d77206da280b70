import type { Knex } from 'knex';
import { backoffMs } from '../../platform/backoff';

/** Why a deposit address is swept: its wallet's autoSweep, or a paid checkout settling to its settlement wallet. */
export type SweepPurpose = 'auto_sweep' | 'checkout_settlement';

/** What one attempt at a sweep came to. */
export type SweepAttempt = { kind: 'arranged'; transferId: string } | { kind: 'nothing' } | { kind: 'held'; reason: string } | { kind: 'failed'; reason: string };

export interface SweepKey {
  addressId: string;
  assetId: string;
  purpose: SweepPurpose;
}

/** A failing sweep is tried again at least this often. */
const MAX_RETRY_MS = 3_600_000;

/**
 * The sweeps due again (table sweeps_due, migration 052): one a deposit's confirmation could not
 * arrange (the node did not answer, the master wallet had no gas for the top-up), or whose transfer
 * failed once arranged (sweeps_arranged, migration 053), is tried again after a delay doubled for
 * each failure; one held by AML is looked at again after the base delay (so it goes once the hold is
 * released); the row is gone once a sweep is arranged or there is nothing to sweep. Every change is
 * made in the transaction of the attempt, or of the sender's step that finished the transfer.
 */
export class SweepsDue {
  constructor(private readonly retryBaseMs: number) {}

  /**
   * Keeps what an attempt at `key`'s sweep came to; `depositId` is the deposit it was made for. An
   * arranged sweep keeps the failed attempts before it, which count on should its transfer fail.
   */
  async settle(trx: Knex.Transaction, key: SweepKey, depositId: string, attempt: SweepAttempt, failedBefore = 0): Promise<void> {
    if (attempt.kind === 'arranged' || attempt.kind === 'nothing') {
      const [due] = await trx('sweeps_due').where(key).delete().returning('attempts');
      if (attempt.kind === 'arranged') await trx('sweeps_arranged').insert({ transferId: attempt.transferId, ...key, depositId, attempts: due?.attempts ?? failedBefore });
      return;
    }
    await trx('sweeps_due')
      .insert({ ...key, depositId, attempts: failedBefore, dueAt: trx.fn.now(), lastError: attempt.reason })
      .onConflict(['addressId', 'assetId', 'purpose'])
      .ignore();
    const { attempts } = await trx('sweeps_due').where(key).forUpdate().first('attempts');
    const failures = attempt.kind === 'failed' ? attempts + 1 : attempts;
    const delayMs = attempt.kind === 'failed' ? backoffMs(failures, this.retryBaseMs, MAX_RETRY_MS) : this.retryBaseMs;
    await trx('sweeps_due')
      .where(key)
      .update({ depositId, attempts: failures, dueAt: new Date(Date.now() + delayMs), lastError: attempt.reason, updatedAt: trx.fn.now() });
  }

  /**
   * An arranged sweep's transfer is final: confirmed, the sweep is done; failed, it is due again (as
   * one that could not be arranged is), so the funds do not wait for the address's next deposit.
   * The key of the sweep due again, if any.
   */
  async transferFinished(trx: Knex.Transaction, transferId: string, failure: string | null): Promise<SweepKey | undefined> {
    const [row] = await trx('sweeps_arranged').where({ transferId }).delete().returning(['addressId', 'assetId', 'purpose', 'depositId', 'attempts']);
    if (!row || failure === null) return undefined;
    const key: SweepKey = { addressId: row.addressId, assetId: row.assetId, purpose: row.purpose };
    await this.settle(trx, key, row.depositId, { kind: 'failed', reason: failure }, row.attempts);
    return key;
  }

  /** The sweep due soonest whose time has come, locked for the caller's transaction (one another worker holds is skipped). */
  async claim(trx: Knex.Transaction): Promise<(SweepKey & { depositId: string }) | undefined> {
    return trx('sweeps_due').where('dueAt', '<=', trx.fn.now()).orderBy('dueAt').forUpdate().skipLocked().first('addressId', 'assetId', 'purpose', 'depositId');
  }

  /** The addresses with a sweep due, as a subquery for the caller's query. */
  static addresses(db: Knex | Knex.Transaction): Knex.QueryBuilder {
    return db('sweeps_due').select('addressId');
  }
}
