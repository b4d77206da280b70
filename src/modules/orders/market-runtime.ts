import { Knex } from 'knex';
import { MatchingEngine } from '../../engine';
import { StatementCheckFailed } from '../../platform/db/one-statement';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { ErrorCode, KeelError } from '../../platform/errors';
import type { LedgerService } from '../ledger';
import type { MarketService, TradingRules } from '../markets';
import { CommittedOrders, writeFillAccounting } from './order-persistence';
import { LIVE_STATUSES } from './order.domain';
import { OrderModel } from './order.model';
import { accountFills, FillAccounting, LockShortfall } from './fill-accounting';
import { readBookSequence } from './book-sequence';
import { CommitListener, describeCommit, touchedLevels } from './committed-change';
import { isResting, Matched, Working, workingFromRow } from './working-order';
import { isFencedOut, sameFence, ShardFence, ShardGate, SOLE_NODE } from './shard-gate';
import { Hook } from '../../platform/events/hooks';
import type { Logger } from '../../platform/logger';

/**
 * One market's engine and the money state of its resting orders, both rebuilt from the open
 * orders in PostgreSQL whenever they are (re)loaded. They change only with a committed command;
 * a failed commit drops the runtime.
 */
export interface Runtime {
  rules: TradingRules;
  engine: MatchingEngine;
  resting: Map<string, Working>;
  /**
   * Each resting order's row as it was placed or loaded (its state columns as of then): a caller's
   * cancel finds its order here, and answers with it and the state its commit writes, reading nothing.
   */
  placed: Map<string, OrderModel>;
  /** The market sequence PostgreSQL holds: each commit moves it from this value, or is refused. */
  committedSequence: number;
  /** The shard token it was loaded under: its commits are refused once another node holds the shard. */
  fence?: ShardFence;
  /** The market's book sequence PostgreSQL holds (migration 021): a commit that changes levels moves it by one. */
  bookSequence: number;
}

/** Refusals decided by the market's rules (status, minimum, the fee a BUY locks) rather than by the book. */
const RULES_REFUSALS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['MARKET_HALTED', 'BELOW_MIN_NOTIONAL', 'INSUFFICIENT_FUNDS']);

/** A runtime's rules were found stale: the command runs again on rules reloaded from the record. */
class MarketRulesChanged extends Error {}

/**
 * The markets' runtimes in this process. Commands for a market run one at a time (a per-market
 * promise chain, `serial`); each is applied to the engine and committed to PostgreSQL before its
 * answer. If that commit fails, the engine (already changed) is dropped and rebuilt from PostgreSQL
 * on the next command, so memory never runs ahead of the record.
 */
export class MarketRuntimes {
  private readonly runtimes = new Map<string, Runtime>();
  private readonly viewRules = new Map<string, Promise<TradingRules>>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /** After the commit: each listener's failure is swallowed and logged (the realtime feeds are best effort; the commit stands). */
  private readonly committed = new Hook<Parameters<CommitListener>>((e) => this.logger?.warn({ err: e }, 'order-book commit listener failed; the commit stands'));

  constructor(
    private readonly db: Knex,
    private readonly markets: MarketService,
    private readonly ledger: LedgerService,
    private readonly uow: UnitOfWork,
    private readonly gate: ShardGate = SOLE_NODE,
    private readonly logger?: Logger,
  ) {
    // A changed market (fees, minimum, status) reloads its engine after the commands already queued.
    markets.onChange((marketId) =>
      this.serial(marketId, async () => {
        this.runtimes.delete(marketId);
        this.viewRules.delete(marketId);
      }),
    );
  }

  /**
   * Hears every commit this process makes, right after it (before the market's next command).
   * A listener must be quick and must not throw into the commit path: its failure is ignored.
   */
  onCommitted(listener: CommitListener): void {
    this.committed.add(listener);
  }

  /** Runs `fn` after the market's commands already queued, and before any queued later. */
  serial<T>(marketId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(marketId) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(marketId, tail);
    void tail.then(() => {
      if (this.queues.get(marketId) === tail) this.queues.delete(marketId);
    });
    return next;
  }

  /**
   * The market's runtime, loaded from the record if it is not cached or was loaded under another
   * holding of its shard. Throws NOT_LEADER when this node does not hold the shard. Call it inside `serial`.
   */
  async runtime(marketId: string): Promise<Runtime> {
    const fence = this.gate.fence((await this.rules(marketId)).market.symbol);
    const cached = this.runtimes.get(marketId);
    if (cached && sameFence(cached.fence, fence)) return cached;
    const rt = await this.load(marketId, fence);
    this.runtimes.set(marketId, rt);
    this.viewRules.set(marketId, Promise.resolve(rt.rules));
    return rt;
  }

  /** For reads: this node's runtime when it leads the market's shard, otherwise undefined (the reader asks PostgreSQL, never rebuilds a book it does not keep). Call it inside `serial`. */
  async leading(marketId: string): Promise<Runtime | undefined> {
    try {
      return await this.runtime(marketId);
    } catch (e) {
      if (e instanceof KeelError && e.code === 'NOT_LEADER') return undefined;
      throw e;
    }
  }

  /** For work that is not a leader's (cancels of a chain reset): the leader's runtime here, or one loaded now under the shard's current token (not kept). */
  async maintenance(marketId: string): Promise<Runtime> {
    try {
      return await this.runtime(marketId);
    } catch (e) {
      if (!(e instanceof KeelError && e.code === 'NOT_LEADER')) throw e;
      return this.load(marketId, await this.gate.currentFence((await this.rules(marketId)).market.symbol));
    }
  }

  private async load(marketId: string, fence: ShardFence | undefined): Promise<Runtime> {
    const rules = await this.markets.tradingRules(marketId);
    const open = await OrderModel.query(this.db).where({ marketId }).whereIn('status', LIVE_STATUSES).orderBy('restSequence').orderBy('id');
    const engine = new MatchingEngine(rules.engine, rules.sequence);
    engine.restore(open.map((o) => ({ id: o.id, owner: o.walletId, side: o.side, price: Number(o.priceTicks), remaining: Number(o.remainingLots) })));
    const bookSequence = await readBookSequence(this.db, marketId);
    return { rules, engine, resting: new Map(open.map((o) => [o.id, workingFromRow(o)])), placed: new Map(open.map((o) => [o.id, o])), committedSequence: rules.sequence, bookSequence, fence };
  }

  /**
   * A resting order of the organisation as this node's runtimes hold it (`Runtime.placed`: its state
   * columns as of its placement or load); undefined when none holds it, or it is another organisation's.
   */
  restingRow(organizationId: string, orderId: string): OrderModel | undefined {
    for (const rt of this.runtimes.values()) {
      const row = rt.placed.get(orderId);
      if (row) return row.organizationId === organizationId ? row : undefined;
    }
    return undefined;
  }

  /** The sequence the market's cached runtime has committed up to; undefined when none is loaded. */
  committedSequence(marketId: string): number | undefined {
    return this.runtimes.get(marketId)?.committedSequence;
  }

  /** Forgets the market's runtime (only if it is still `rt`, when given): the next command rebuilds it from the record. */
  drop(marketId: string, rt?: Runtime): void {
    if (!rt || this.runtimes.get(marketId) === rt) this.runtimes.delete(marketId);
  }

  /** The market's rules for shaping answers: cached, without waiting for its commands. */
  rules(marketId: string): Promise<TradingRules> {
    let rules = this.viewRules.get(marketId);
    if (!rules) {
      rules = this.markets.tradingRules(marketId);
      rules.catch(() => this.viewRules.delete(marketId));
      this.viewRules.set(marketId, rules);
    }
    return rules;
  }

  /** Commits matched commands in one statement, then brings the runtime up to date; on any failure the runtime is dropped. */
  async commit(marketId: string, rt: Runtime, commands: Matched[]): Promise<CommittedOrders> {
    try {
      const accounted = accountFills(rt.rules, rt.resting, commands);
      const newRows = new Map(commands.flatMap((c) => (c.order ? [[c.order.working.id, c.order.row] as const] : [])));
      const records = commands.flatMap((c) => (c.record ? [c.record] : []));
      const levels = touchedLevels(commands.flatMap((c) => c.events));
      const book = { from: rt.bookSequence, to: levels.size ? rt.bookSequence + 1 : rt.bookSequence };
      const sequence = { marketId, from: rt.committedSequence, to: rt.engine.sequence, rulesVersion: rt.rules.rulesVersion, book };
      const committedAt = new Date();
      this.uow.committing('order.commit');
      const written = await writeFillAccounting(this.db, this.ledger, this.markets, this.uow, sequence, accounted, newRows, records, rt.fence, committedAt);
      rt.committedSequence = rt.engine.sequence;
      rt.bookSequence = book.to;
      for (const w of accounted.orders) {
        if (isResting(w)) {
          rt.resting.set(w.id, { ...w, isNew: false });
          if (w.isNew) rt.placed.set(w.id, written.created.get(w.id)!);
        } else {
          rt.resting.delete(w.id);
          rt.placed.delete(w.id);
        }
      }
      this.announce(rt, levels, accounted, newRows, committedAt);
      return written;
    } catch (e) {
      this.runtimes.delete(marketId);
      // The caller's answer is a bare 500 (it may not own the order): the operator is told which order.
      if (e instanceof LockShortfall) this.logger?.error({ marketId, orderId: e.orderId, locked: String(e.locked), needed: String(e.needed) }, 'an order cannot pay for its fill from its lock; the command is refused');
      // Another node holds the shard now: this one stops leading it (the retry then answers NOT_LEADER).
      if (rt.fence && isFencedOut(e)) this.gate.fencedOut(rt.fence);
      if ((e as { code?: string }).code === '23505' && String((e as { constraint?: string }).constraint).includes('client_order_id')) {
        throw new KeelError('DUPLICATE_ENTRY', 'clientOrderId is already used by another order of this organisation', { fields: [{ field: 'clientOrderId', error: 'is already used' }] });
      }
      throw e;
    }
  }

  private announce(rt: Runtime, levels: ReadonlySet<string>, accounted: FillAccounting, newRows: ReadonlyMap<string, Partial<OrderModel>>, committedAt: Date): void {
    if (this.committed.empty) return;
    try {
      this.committed.notify(describeCommit(rt, levels, accounted, newRows, committedAt));
    } catch {
      // The realtime feeds are best effort; the commit stands.
    }
  }

  /**
   * Accepted orders are fenced by the rules version at commit (MarketService.sequencePart); a
   * refusal commits nothing, so before one decided by the rules is answered, the rules it was
   * decided on must still be the stored ones. Otherwise the runtime is dropped and the command
   * runs again: a node that missed a resume or a lowered minimum never keeps refusing.
   */
  async assertRulesCurrent(marketId: string, rt: Runtime, refusals: unknown[]): Promise<void> {
    if (!refusals.some((e) => e instanceof KeelError && RULES_REFUSALS.has(e.code))) return;
    if ((await this.markets.rulesVersion(marketId)) === rt.rules.rulesVersion) return;
    this.drop(marketId, rt);
    throw new MarketRulesChanged(`Market ${marketId}: rules changed since its engine was loaded`);
  }

  /**
   * Runs a command again (on a rebuilt engine) when PostgreSQL aborted its statement for a
   * deadlock or a serialisation failure, or refused it because the market's sequence or rules
   * moved (another process wrote to the market, or the market was changed) or its shard's fencing
   * token did (the retry then finds this node no longer leads it); the engine has been
   * dropped by then. A command refused three times is answered 503, having written nothing.
   */
  async retryingTransient<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        const code = (e as { code?: string }).code;
        const transient = code === '40P01' || code === '40001' || e instanceof StatementCheckFailed || e instanceof MarketRulesChanged;
        if (!transient) throw e;
        if (attempt >= 2) throw new KeelError('SERVICE_UNAVAILABLE', 'The market kept changing while the command ran; nothing was written, try again');
      }
    }
  }
}
