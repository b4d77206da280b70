import { Knex } from 'knex';
import { backoffMs } from '../../platform/backoff';
import type { Outbox } from '../../platform/events/outbox';
import type { Logger } from '../../platform/logger';
import type { ChainService } from '../chains';
import type { SendingWallets } from '../wallets';
import type { SendingItem, TransferOutcomeListener } from '../withdrawals';
import { transfersWaitingOn } from '../withdrawals';
import { executionEvent } from './settlement-events';

export interface RetryPolicy {
  /** Delay before the second attempt; doubled for each further one. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** Attempts in all, after which an execution is FAILED for good. */
  maxAttempts: number;
}

/**
 * The states of an execution after it was claimed, each change with its event in the same
 * transaction: SUBMITTED when its transfer or swap is queued (PENDING a while longer when held by
 * AML, with no event); EXECUTED when the transaction sender confirms the line that settles it; a
 * failure (preparing it, or on chain) sends it back to PENDING with exponential backoff until
 * maxAttempts, then FAILED. Each failure emits *.failed (with
 * nextAttemptAt when another attempt follows), the success *.executed.
 */
export class SettlementOutcomes implements TransferOutcomeListener {
  constructor(
    private readonly chains: ChainService,
    private readonly wallets: SendingWallets,
    private readonly outbox: Outbox,
    private readonly retry: RetryPolicy,
    private readonly logger: Logger,
  ) {}

  async submitted(trx: Knex.Transaction, execution: Record<string, any>, queued: { kind: 'sweep' | 'swap'; transferId: string; transferItemId: string; swapId: string | null }): Promise<void> {
    await trx('settlement_rule_executions')
      .where({ id: execution.id, status: 'PENDING' })
      .update({ status: 'SUBMITTED', ...queued, attempts: execution.attempts + 1, error: null, updatedAt: trx.fn.now() });
  }

  async cancelled(trx: Knex.Transaction, execution: Record<string, any>, reason: string): Promise<void> {
    await trx('settlement_rule_executions').where({ id: execution.id, status: 'PENDING' }).update({ status: 'CANCELLED', error: reason, updatedAt: trx.fn.now() });
  }

  /**
   * Held by AML (its address, or the master wallet that would pay its gas, holds a flagged deposit
   * not released): PENDING, looked at again after
   * the base delay (so it goes once the hold is released), never counted as a failed attempt.
   */
  async held(trx: Knex.Transaction, execution: Record<string, any>, reason: string): Promise<void> {
    await trx('settlement_rule_executions')
      .where({ id: execution.id, status: 'PENDING' })
      .update({ error: reason, runAfter: new Date(Date.now() + this.retry.baseBackoffMs), updatedAt: trx.fn.now() });
    if (execution.error !== reason) this.logger.warn({ executionId: execution.id, reason }, 'settlement rule execution held by AML');
  }

  /** The line that settles an execution failed on chain (or was refused by it): another attempt, re-priced. */
  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    const execution = await this.submittedFor(trx, item.id);
    if (execution) await this.attemptFailed(trx, execution, (item as SendingItem & { error?: string | null }).error ?? 'the transaction failed', false, true);
  }

  /**
   * A failed attempt: again later with backoff, or FAILED for good when permanent or out of
   * attempts. `attemptCounted`: the attempt was already counted when it was submitted. `cause`: the
   * error `error` was shown for (shownReason), logged with it.
   */
  async attemptFailed(trx: Knex.Transaction, execution: Record<string, any>, error: string, permanent: boolean, attemptCounted: boolean, cause?: unknown): Promise<void> {
    const attempts = attemptCounted ? execution.attempts : execution.attempts + 1;
    const final = permanent || attempts >= this.retry.maxAttempts;
    const nextAttemptAt = final ? null : new Date(Date.now() + backoffMs(attempts, this.retry.baseBackoffMs, this.retry.maxBackoffMs));
    const [row] = await trx('settlement_rule_executions')
      .where({ id: execution.id })
      .whereIn('status', ['PENDING', 'SUBMITTED'])
      .update({ status: final ? 'FAILED' : 'PENDING', attempts, error, runAfter: nextAttemptAt ?? trx.fn.now(), updatedAt: trx.fn.now() })
      .returning('*');
    if (!row) return;
    this.logger.warn({ executionId: execution.id, attempts, final, error, err: cause }, 'settlement rule execution failed');
    await this.outbox.publish(trx, await executionEvent(trx, this.chains, this.wallets, row, { outcome: 'failed', txHash: row.txHash ?? null, error, nextAttemptAt }));
  }

  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    const execution = await this.submittedFor(trx, item.id);
    if (!execution) return;
    const [row] = await trx('settlement_rule_executions').where({ id: execution.id, status: 'SUBMITTED' }).update({ status: 'EXECUTED', txHash: item.txHash, updatedAt: trx.fn.now() }).returning('*');
    if (row) await this.outbox.publish(trx, await executionEvent(trx, this.chains, this.wallets, row, { outcome: 'executed', txHash: item.txHash, error: null }));
  }

  /**
   * An administrator rejected a transfer (security.requireApprovalForTransfers; TransferService.onRejected,
   * in the rejecting transaction): the execution it settles, or whose lines wait on it (the master
   * wallet's gas top-up for a deposit address), is FAILED for good, with *.failed.
   */
  readonly rejected = async (trx: Knex.Transaction, transfer: { itemIds: string[] }): Promise<void> => {
    const waiting = transfersWaitingOn(trx, transfer.itemIds);
    const rows: Record<string, any>[] = await trx('settlement_rule_executions')
      .where({ status: 'SUBMITTED' })
      .where((q) => q.whereIn('transferItemId', transfer.itemIds).orWhereIn('transferId', waiting))
      .forUpdate();
    for (const execution of rows) {
      const what = transfer.itemIds.includes(execution.transferItemId) ? 'the transfer' : 'the gas top-up it waited for';
      await this.attemptFailed(trx, execution, `${what} was rejected by an administrator`, true, true);
    }
  };

  private async submittedFor(trx: Knex.Transaction, itemId: string): Promise<Record<string, any> | undefined> {
    return trx('settlement_rule_executions').where({ transferItemId: itemId, status: 'SUBMITTED' }).forUpdate().first();
  }
}
