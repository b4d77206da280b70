import { Knex } from 'knex';
import type { RejectReason } from '../../engine';
import { formatMultiple, formatScaled } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import type { ClaimStep } from '../../platform/idempotency';
import type { LedgerService } from '../ledger/ledger.service';
import { GroupFunds } from './group-funds';
import type { MarketRuntimes, Runtime } from './market-runtime';
import { OrderSide, PlaceOrderInput } from './order.domain';
import type { OrderModel } from './order.model';
import { checkPlacement } from './placement-checks';
import { Matched, newWorking } from './working-order';

/** A placement as it waits for its market's turn. */
export interface Placement {
  organizationId: string;
  walletId: string;
  marketId: string;
  id: string;
  input: PlaceOrderInput;
  /** The request's idempotency step the placement completes. */
  step?: ClaimStep;
}

/** A caller's cancel as it waits for its market's turn: an order of the organisation found live before it queued. */
export interface Cancellation {
  organizationId: string;
  marketId: string;
  orderId: string;
  /** The request's idempotency step the cancel completes. */
  step?: ClaimStep;
}

/**
 * A cancel the group did not take: the engine does not hold the order (filled or cancelled by the
 * commands before it, or the engine and the record disagree), or the group's commit failed. Nothing
 * of it was written; the caller runs it on its own, after the group, against the record.
 */
export class CancelOnItsOwn extends Error {
  constructor() {
    super('The cancel runs on its own, after its group');
  }
}

/** What became of a placement: rejected by the engine, or the order row as committed (absent when it must be read back). */
export interface PlacementOutcome {
  rejected?: RejectReason;
  row?: OrderModel;
}

/** What an idempotent placement records: a retry answers from it. */
export interface PlacedOrder {
  orderId: string;
  rejected?: RejectReason;
}

type Command = ({ kind: 'place' } & Placement) | ({ kind: 'cancel' } & Cancellation);

type QueuedCommand = Command & {
  settled: boolean;
  resolve(outcome: PlacementOutcome): void;
  reject(e: unknown): void;
};
type QueuedPlacement = Extract<QueuedCommand, { kind: 'place' }>;

/**
 * A cancel applied to the engine (not yet committed); CancelOnItsOwn when the engine does not hold
 * the order. Asked before the cancel is applied: the engine numbers even a refused cancel, and a
 * number taken by a command the group does not commit would be published (the book's sequence)
 * without being persisted, or persisted as a gap.
 */
function cancelIn(rt: Runtime, c: Cancellation): Matched {
  if (!rt.engine.order(c.orderId)) throw new CancelOnItsOwn();
  const events = rt.engine.apply({ kind: 'cancel', id: c.orderId });
  return { events, order: null, record: c.step && { step: c.step, value: { orderId: c.orderId } } };
}

/** Most placements matched and committed together in one transaction. */
const GROUP_COMMIT_MAX = 256;

/**
 * Group commit: placements and cancels that arrive while their market is busy wait in a queue; the
 * next turn applies all of them in arrival order and commits them in one transaction, and each
 * answer follows that commit. If the group's transaction fails, the engine is rebuilt and the
 * group's placements run again one at a time, so one bad placement cannot sink the others (its
 * cancels are handed back, CancelOnItsOwn).
 */
export class PlacementQueue {
  private readonly queues = new Map<string, QueuedCommand[]>();

  constructor(
    private readonly db: Knex,
    private readonly ledger: LedgerService,
    private readonly runtimes: MarketRuntimes,
  ) {}

  /** Placements of the market waiting for its next turn. */
  depth(marketId: string): number {
    return this.queues.get(marketId)?.length ?? 0;
  }

  place(p: Placement): Promise<PlacementOutcome> {
    return this.enqueue(Object.assign({ kind: 'place' as const }, p));
  }

  /** Cancels a live order in its market's next group; CancelOnItsOwn when the group does not take it. */
  async cancel(c: Cancellation): Promise<void> {
    await this.enqueue(Object.assign({ kind: 'cancel' as const }, c));
  }

  private enqueue(command: Command): Promise<PlacementOutcome> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(command.marketId);
      if (!queue) {
        queue = [];
        this.queues.set(command.marketId, queue);
        void this.runtimes.serial(command.marketId, () => this.drain(command.marketId));
      }
      queue.push(Object.assign(command, { settled: false, resolve, reject }) as QueuedCommand);
    });
  }

  private async drain(marketId: string): Promise<void> {
    const queue = this.queues.get(marketId) ?? [];
    this.queues.delete(marketId);
    for (let i = 0; i < queue.length; i += GROUP_COMMIT_MAX) {
      const group = queue.slice(i, i + GROUP_COMMIT_MAX);
      try {
        await this.placeGroup(marketId, group);
      } catch {
        // The group may have reached the engine without committing: rebuild it from the record.
        this.runtimes.drop(marketId);
        for (const q of group.filter((q) => !q.settled)) {
          if (q.kind === 'cancel') q.reject(new CancelOnItsOwn());
          else await this.runtimes.retryingTransient(() => this.placeAlone(q)).then(q.resolve, q.reject);
        }
      }
    }
  }

  private async placeGroup(marketId: string, group: QueuedCommand[]): Promise<void> {
    const rt = await this.runtimes.runtime(marketId);
    const funds = new GroupFunds(this.ledger, this.db);
    const { market } = rt.rules;
    const placements = group.filter((q): q is QueuedPlacement => q.kind === 'place');
    funds.prefetch(placements.map((p) => ({ walletId: p.walletId, assetId: p.input.side === OrderSide.BUY ? market.quoteAssetId : market.baseAssetId })));
    const matched: { p: QueuedCommand; m: Matched }[] = [];
    const refused: { p: QueuedCommand; e: unknown }[] = [];
    for (const p of group) {
      try {
        matched.push({ p, m: p.kind === 'cancel' ? cancelIn(rt, p) : await this.match(rt, p, funds) });
      } catch (e) {
        // Refused before it reached the engine (or, a cancel, refused by it): nothing to undo.
        refused.push({ p, e });
      }
    }
    await this.runtimes.assertRulesCurrent(marketId, rt, refused.map((r) => r.e));
    for (const { p, e } of refused) {
      p.settled = true;
      p.reject(e);
    }
    if (!matched.length) return;
    const rows = await this.runtimes.commit(marketId, rt, matched.map((x) => x.m));
    for (const { p, m } of matched) {
      p.settled = true;
      p.resolve(p.kind === 'place' ? { rejected: m.rejected, row: rows.get(p.id) } : {});
    }
  }

  /** One placement on its own: its own balance read, match and commit. */
  private async placeAlone(p: Placement): Promise<PlacementOutcome> {
    const rt = await this.runtimes.runtime(p.marketId);
    let m: Matched;
    try {
      m = await this.match(rt, p, new GroupFunds(this.ledger, this.db));
    } catch (e) {
      await this.runtimes.assertRulesCurrent(p.marketId, rt, [e]);
      throw e;
    }
    const rows = await this.runtimes.commit(p.marketId, rt, [m]);
    return { rejected: m.rejected, row: rows.get(p.id) };
  }

  /** Checks a placement, reserves what it locks in `funds` and applies it to the engine (not yet committed). */
  private async match(rt: Runtime, p: Placement, funds: GroupFunds): Promise<Matched> {
    const { rules, engine } = rt;
    const { organizationId, walletId, id, input } = p;
    const { command, lots, ticks, lockAssetId, lock } = checkPlacement(rt, id, walletId, input);
    if (lock > 0n) {
      const available = await funds.available(walletId, lockAssetId);
      if (available < lock) {
        const buy = command.side === OrderSide.BUY;
        const decimals = buy ? rules.quoteDecimals : rules.baseDecimals;
        throw new KeelError('INSUFFICIENT_FUNDS', `Insufficient ${buy ? rules.market.quoteSymbol : rules.market.baseSymbol} balance: the order needs ${formatScaled(lock, decimals)}, ${formatScaled(available, decimals)} is available`, {
          assetId: lockAssetId,
          required: formatScaled(lock, decimals),
          available: formatScaled(available, decimals),
        });
      }
    }

    const events = engine.apply(command);
    const rejected = events[0].type === 'rejected' ? events[0].reason : undefined;
    const working = newWorking({ id, organizationId, walletId, side: input.side, lots, lockAssetId, lock, rejected: rejected !== undefined });
    const row: Partial<OrderModel> = {
      id,
      organizationId,
      marketId: p.marketId,
      walletId,
      clientOrderId: input.clientOrderId ?? null,
      side: command.side,
      type: command.type,
      timeInForce: command.timeInForce,
      postOnly: command.postOnly ?? false,
      price: ticks === null ? null : formatMultiple(rules.tick, ticks),
      quantity: formatMultiple(rules.lot, lots),
      priceTicks: ticks === null ? null : String(ticks),
      quantityLots: String(lots),
      sequence: String(events[0].sequence),
    };
    if (!rejected && lock > 0n) funds.reserve(walletId, lockAssetId, lock);
    const placed: PlacedOrder = { orderId: id, rejected };
    return { events, order: { working, row, lock: rejected ? 0n : lock }, rejected, record: p.step && { step: p.step, value: placed } };
  }
}
