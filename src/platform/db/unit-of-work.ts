import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';
import type { ClaimRef, ClaimStep, IdempotencyStore, Recorded } from '../idempotency';
import type { Failpoints } from '../failpoints';
import type { StatementPart } from './one-statement';

/** The request's idempotency claim, and how many units of work it has begun. */
interface RequestScope {
  claim?: ClaimRef;
  steps: number;
}

const requestScope = new AsyncLocalStorage<RequestScope>();
/**
 * While an AsyncLocalStorage is enabled, Node runs its hooks on every promise in the process
 * (about a tenth of a cached read's CPU): the store is switched off whenever no scope is open.
 */
let openScopes = 0;

/** A step's result, to record as a part of the statement that commits its work. */
export interface StepResult {
  step: ClaimStep;
  value: unknown;
}

/** A unit of work whose writes commit elsewhere (a composed statement): its step and what an earlier attempt recorded. */
export interface ReservedStep<R> {
  step?: ClaimStep;
  recorded: Recorded<R>;
}

/**
 * The one way state-changing work commits. Each unit of work of a request that holds an
 * Idempotency-Key claim is a numbered step of that claim; its result is written onto the claim in
 * the work's own transaction, so the two commit or vanish together. When a retry of the request
 * (after a crash, a timeout or a 5xx that followed the commit) reaches the same step, the recorded
 * result is returned and the work does not run again. Steps are numbered in the order the request
 * begins them, which is the same on every attempt (GraphQL runs a document's mutations one after
 * another). Without a claim, run is a plain transaction.
 *
 * A result must be what the caller needs to answer from: plain data (Date and bigint survive),
 * never a handle. Secrets in it are safe: results are sealed.
 */
export class UnitOfWork {
  constructor(
    private readonly db: Knex,
    private readonly idempotency: IdempotencyStore,
    private readonly failpoints: Failpoints,
  ) {}

  /**
   * Runs `handle` (a request that holds an Idempotency-Key) in a scope of its own, to which the
   * request's claim is bound. `untilOver` is given the scope's close, to call once the request's
   * work is over (its answer made; not merely its connection gone, or the work would run on
   * unrecorded). Work outside any scope (a request without a key) runs as plain transactions.
   */
  static scope<T>(untilOver: (close: () => void) => void, handle: () => T): T {
    openScopes++;
    let open = true;
    untilOver(() => {
      if (!open) return;
      open = false;
      if (--openScopes === 0) requestScope.disable();
    });
    return requestScope.run({ steps: 0 }, handle);
  }

  /** How many request scopes are open (while any is, the store, and its cost to every promise, is on). */
  static get openScopes(): number {
    return openScopes;
  }

  /** Binds the request's idempotency claim to the current scope: the units of work it runs from now on are recorded on it. */
  static bindClaim(claim: ClaimRef): void {
    const scope = requestScope.getStore();
    if (!scope) throw new Error('UnitOfWork.bindClaim outside UnitOfWork.scope');
    scope.claim = claim;
  }

  /** `name` identifies the work to failpoints (`after-commit:<name>`). */
  async run<R>(name: string, work: (trx: Knex.Transaction) => Promise<R>): Promise<R> {
    return this.runChecked(name, async () => undefined, (trx) => work(trx));
  }

  /**
   * The same, with checks that read what the work will change (balances, say) run first, outside
   * the transaction, and only when the step has no recorded result: a retry is answered from the
   * record, not refused by the state the first attempt left.
   */
  async runChecked<C, R>(name: string, check: () => Promise<C>, work: (trx: Knex.Transaction, checked: C) => Promise<R>): Promise<R> {
    const step = this.nextStep();
    if (step) {
      const earlier = await this.idempotency.recordedNow<R>(step);
      if (earlier.found) return earlier.value;
    }
    const checked = await check();
    let ran = true;
    const result = await this.db.transaction(async (trx) => {
      if (!step) return work(trx, checked);
      // Under the claim's row lock: a second attempt that took the claim over meanwhile is seen here.
      const recorded = await this.idempotency.recorded<R>(trx, step);
      if (recorded.found) {
        ran = false;
        return recorded.value;
      }
      const value = await work(trx, checked);
      await this.idempotency.record(trx, step, value);
      return value;
    });
    if (ran) this.committed(name);
    return result;
  }

  /**
   * For work that commits as a part of a composed statement: takes its step now, with the result
   * an earlier attempt recorded, if any. The writer adds `resultsPart` for the step to its
   * statement and calls `committed` once the statement has run.
   */
  async reserve<R>(): Promise<ReservedStep<R>> {
    const step = this.nextStep();
    return { step, recorded: step ? await this.idempotency.recordedNow<R>(step) : { found: false } };
  }

  /** Records steps' results as one part of a composed statement (runAsOneStatement), atomic with the rest of it. */
  resultsPart(results: StepResult[]): StatementPart {
    return this.idempotency.resultsPart(results);
  }

  /** Work `name` has committed (failpoint `after-commit:<name>`). */
  committed(name: string): void {
    this.failpoints.hit(`after-commit:${name}`);
  }

  /** Work that commits as a part of a composed statement is about to send it (failpoints `stop-before-commit:<name>`). */
  committing(name: string): void {
    this.failpoints.hit(`before-commit:${name}`);
  }

  private nextStep(): ClaimStep | undefined {
    const scope = requestScope.getStore();
    if (!scope) return undefined;
    const step = scope.steps++;
    return scope.claim ? { ...scope.claim, step } : undefined;
  }
}
