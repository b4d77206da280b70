import { Knex } from 'knex';
import { isKeelError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { startPollingLoop } from '../../platform/polling-loop';
import { PermanentFailure, SettlementExecutor } from './settlement-executor';
import type { SettlementOutcomes } from './settlement-outcomes';
import { shownReason } from '../../platform/shown-reason';

export interface SettlementWorkerOptions {
  pollIntervalMs: number;
}

/** At most this many executions per pass. */
const BATCH = 20;
/** Refusals no retry can change: the rule or the request is wrong, not the moment. */
const PERMANENT_CODES = new Set(['FORBIDDEN', 'INVALID_FIELD', 'VALIDATION_ERROR', 'INVALID_NETWORK', 'INVALID_ADDRESS', 'CONFLICT', 'NOT_FOUND', 'WALLET_NOT_FOUND']);

/**
 * Runs due settlement-rule executions. Each is claimed with FOR UPDATE SKIP LOCKED and prepared in
 * the same transaction that queues its sweep or swap and marks it SUBMITTED, so two workers never
 * take the same one and a crash leaves it either untouched (PENDING) or queued (SUBMITTED), never
 * both: the rule fires once. A failed preparation rolls back to a savepoint and is recorded as a
 * failed attempt (backoff, then FAILED).
 */
export class SettlementRuleWorker {
  constructor(
    private readonly db: Knex,
    private readonly executor: SettlementExecutor,
    private readonly outcomes: SettlementOutcomes,
    private readonly options: SettlementWorkerOptions,
    private readonly logger: Logger,
  ) {}

  start(): { stop(): Promise<void> } {
    return startPollingLoop(() => this.tick(), this.options.pollIntervalMs, (e) => this.logger.warn({ err: e }, 'settlement rule worker: pass failed, retrying'));
  }

  async tick(): Promise<void> {
    for (let i = 0; i < BATCH; i++) if (!(await this.runOne())) return;
  }

  /** Claims and runs one due execution; false when none is due. */
  async runOne(): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const execution = await trx('settlement_rule_executions').where({ status: 'PENDING' }).where('runAfter', '<=', trx.fn.now()).orderBy('runAfter').forUpdate().skipLocked().first();
      if (!execution) return false;
      try {
        await trx.transaction(async (sp) => {
          const plan = await this.executor.prepare(sp, execution);
          if ('cancelled' in plan) await this.outcomes.cancelled(sp, execution, plan.cancelled);
          else if ('held' in plan) await this.outcomes.held(sp, execution, plan.held);
          else await this.outcomes.submitted(sp, execution, plan);
        });
      } catch (e) {
        const permanent = e instanceof PermanentFailure || (isKeelError(e) && PERMANENT_CODES.has(e.code));
        await this.outcomes.attemptFailed(trx, execution, shownReason(e), permanent, false, e);
      }
      return true;
    });
  }
}
