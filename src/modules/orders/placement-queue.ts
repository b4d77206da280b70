import { Knex } from 'knex';
import type { EngineEvent, RejectReason } from '../../engine';
import { formatMultiple, formatScaled } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import type { ClaimStep } from '../../platform/idempotency';
import type { LedgerService } from '../ledger';
import { GroupClientOrderIds } from './group-client-order-ids';
import { GroupFunds } from './group-funds';
import type { MarketRuntimes, Runtime } from './market-runtime';
import { OrderSide, PlaceOrderInput } from './order.domain';
import type { OrderModel } from './order.model';
import { CheckedPlacement, checkPlacement, engineRejection } from './placement-checks';
import { Matched, newWorking } from './working-order';
import { BatchedLookup } from './batched-lookup';
import { NO_EXITS, WalletExit, WalletExits } from './wallet-exits';

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

/** A cancel-replace as it waits for its market's turn: the new order's placement, and the live order of the organisation it replaces. */
export interface Replacement extends Placement {
  replaces: string;
  /** The new order's quantity is the old order's unfilled rest as the replace is applied (`input.quantity` is then ignored). */
  keepsRest: boolean;
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
 * A cancel (or cancel-replace) the group did not take: the engine does not hold the order (filled
 * or cancelled by the commands before it, or the engine and the record disagree), a command before
 * it in the group filled part of it, or the group's commit failed. Nothing of it was written; the
 * caller runs it on its own, after the group, against the record.
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
  /** A cancel's: the order's state as the commit left it (its id and the columns a commit changes). */
  state?: Partial<OrderModel>;
}

/** What an idempotent placement records: a retry answers from it. */
export interface PlacedOrder {
  orderId: string;
  rejected?: RejectReason;
}

type Command = ({ kind: 'place' } & Placement) | ({ kind: 'replace' } & Replacement) | ({ kind: 'cancel' } & Cancellation);

type QueuedCommand = Command & {
  settled: boolean;
  resolve(outcome: PlacementOutcome): void;
  reject(e: unknown): void;
};
type QueuedPlacement = Extract<QueuedCommand, { kind: 'place' | 'replace' }>;

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

/** What a group of placements reads once for all of them: the balances their locks take, the clientOrderIds they use, their wallets' exits. */
interface GroupReads {
  funds: GroupFunds;
  clientOrderIds: GroupClientOrderIds;
  /** By wallet: its request to exit the settlement contract of the market's chain, if it made one. */
  exits: BatchedLookup<string, WalletExit>;
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
  /** Which wallets asked to exit a chain's settlement contract (the settlement module's, once wired). */
  exits: WalletExits = NO_EXITS;

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

  /** Cancels a live order and places its replacement in its market's next group, in one commit; CancelOnItsOwn when the group does not take it. */
  replace(r: Replacement): Promise<PlacementOutcome> {
    return this.enqueue(Object.assign({ kind: 'replace' as const }, r));
  }

  /** Cancels a live order in its market's next group: the order's state as committed; CancelOnItsOwn when the group does not take it. */
  async cancel(c: Cancellation): Promise<Partial<OrderModel> | undefined> {
    return (await this.enqueue(Object.assign({ kind: 'cancel' as const }, c))).state;
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
          if (q.kind !== 'place') q.reject(new CancelOnItsOwn());
          else await this.runtimes.retryingTransient(() => this.placeAlone(q)).then(q.resolve, q.reject);
        }
      }
    }
  }

  private async placeGroup(marketId: string, group: QueuedCommand[]): Promise<void> {
    const rt = await this.runtimes.runtime(marketId);
    const reads = this.groupReads(rt);
    const { market } = rt.rules;
    const placements = group.filter((q): q is QueuedPlacement => q.kind !== 'cancel');
    reads.exits.prefetch(placements.map((p) => p.walletId));
    reads.funds.prefetch(placements.map((p) => ({ walletId: p.walletId, assetId: p.input.side === OrderSide.BUY ? market.quoteAssetId : market.baseAssetId })));
    reads.clientOrderIds.prefetch(placements.flatMap((p) => (p.input.clientOrderId ? [{ organizationId: p.organizationId, clientOrderId: p.input.clientOrderId }] : [])));
    const matched: { p: QueuedCommand; m: Matched }[] = [];
    const refused: { p: QueuedCommand; e: unknown }[] = [];
    for (const p of group) {
      try {
        matched.push({ p, m: p.kind === 'cancel' ? cancelIn(rt, p) : p.kind === 'replace' ? await this.replaceIn(rt, p, reads) : await this.match(rt, p, reads) });
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
    const { created, changed } = await this.runtimes.commit(marketId, rt, matched.map((x) => x.m));
    for (const { p, m } of matched) {
      p.settled = true;
      p.resolve(p.kind === 'cancel' ? { state: changed.get(p.orderId) } : { rejected: m.rejected, row: created.get(p.id) });
    }
  }

  private groupReads(rt: Runtime): GroupReads {
    const { blockchainId } = rt.rules.market;
    return { funds: new GroupFunds(this.ledger, this.db), clientOrderIds: new GroupClientOrderIds(this.db), exits: new BatchedLookup((walletId) => walletId, (walletIds) => this.exits.exitsOf(blockchainId, walletIds)) };
  }

  /** One placement on its own: its own balance read, match and commit. */
  private async placeAlone(p: Placement): Promise<PlacementOutcome> {
    const rt = await this.runtimes.runtime(p.marketId);
    let m: Matched;
    try {
      m = await this.match(rt, p, this.groupReads(rt));
    } catch (e) {
      await this.runtimes.assertRulesCurrent(p.marketId, rt, [e]);
      throw e;
    }
    const { created } = await this.runtimes.commit(p.marketId, rt, [m]);
    return { rejected: m.rejected, row: created.get(p.id) };
  }

  /**
   * A cancel-replace on its own, against the record (call it inside the market's `serial`): its own
   * balance read, cancel, placement and one commit. An engine that does not hold the order is
   * rebuilt from the record once.
   */
  async replaceAlone(r: Replacement): Promise<PlacementOutcome> {
    for (let attempt = 0; ; attempt++) {
      const rt = await this.runtimes.runtime(r.marketId);
      let m: Matched;
      try {
        m = await this.replaceIn(rt, r, this.groupReads(rt));
      } catch (e) {
        if (e instanceof CancelOnItsOwn) {
          this.runtimes.drop(r.marketId);
          if (attempt === 0) continue;
          throw new KeelError('INTERNAL_ERROR', 'The order book is out of step with the order record');
        }
        await this.runtimes.assertRulesCurrent(r.marketId, rt, [e]);
        throw e;
      }
      const { created } = await this.runtimes.commit(r.marketId, rt, [m]);
      return { rejected: m.rejected, row: created.get(r.id) };
    }
  }

  /**
   * A cancel-replace applied to the engine (not yet committed), as one command: the old order's
   * cancel and the new order's placement. The new order may lock what the old one releases. Nothing
   * reaches the engine unless both will: a replacement the checks, the funds or the engine would
   * refuse leaves the old order as it is. CancelOnItsOwn when the engine does not hold the old
   * order, or holds less of it than the record (a command before it in the group filled some).
   */
  private async replaceIn(rt: Runtime, r: Replacement, reads: GroupReads): Promise<Matched> {
    const { funds } = reads;
    const old = rt.resting.get(r.replaces);
    const held = rt.engine.order(r.replaces);
    if (!old || !held || BigInt(held.remaining) !== old.remainingLots || !old.lockAssetId) throw new CancelOnItsOwn();
    if (r.keepsRest) r = Object.assign({}, r, { input: Object.assign({}, r.input, { quantity: formatMultiple(rt.rules.lot, old.remainingLots) }) });
    const freed = { walletId: old.walletId, assetId: old.lockAssetId, amount: old.lockedAmount };
    funds.reserve(freed.walletId, freed.assetId, -freed.amount);
    let checked: CheckedPlacement;
    try {
      checked = await this.admit(rt, r, reads);
      const reason = rt.engine.check(checked.command);
      if (reason) throw engineRejection(r.id, reason);
    } catch (e) {
      funds.reserve(freed.walletId, freed.assetId, freed.amount);
      throw e;
    }
    return this.enter(rt, r, checked, reads, rt.engine.apply({ kind: 'cancel', id: r.replaces }));
  }

  /** Checks a placement, reserves what it locks in the group's funds and applies it to the engine (not yet committed). */
  private async match(rt: Runtime, p: Placement, reads: GroupReads): Promise<Matched> {
    return this.enter(rt, p, await this.admit(rt, p, reads), reads);
  }

  /** Checks a placement against its market and its wallet's exit, its clientOrderId against the record and the group, and what the group's funds have available for its lock. */
  private async admit(rt: Runtime, p: Placement, reads: GroupReads): Promise<CheckedPlacement> {
    const { rules } = rt;
    const { walletId, id, input } = p;
    const checked = checkPlacement(rt, id, walletId, input, await reads.exits.get(walletId));
    const { command, lockAssetId, lock } = checked;
    if (input.clientOrderId) await reads.clientOrderIds.assertFree({ organizationId: p.organizationId, clientOrderId: input.clientOrderId });
    if (lock > 0n) {
      const available = await reads.funds.available(walletId, lockAssetId);
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
    return checked;
  }

  /**
   * Applies a checked placement to the engine (after `before`, the events of a cancel it replaces)
   * and reserves what it locks (and its clientOrderId) in the group's reads: the command's events and its new order, not yet committed.
   */
  private enter(rt: Runtime, p: Placement, checked: CheckedPlacement, reads: GroupReads, before: EngineEvent[] = []): Matched {
    const { rules, engine } = rt;
    const { organizationId, walletId, id, input } = p;
    const { command, lots, ticks, lockAssetId, lock } = checked;
    const events = before;
    const first = events.length;
    engine.apply(command, events);
    const head = events[first];
    const rejected = head.type === 'rejected' ? head.reason : undefined;
    const working = newWorking({ id, organizationId, walletId, side: input.side, priceTicks: ticks, lots, lockAssetId, lock, rejected: rejected !== undefined });
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
      sequence: String(head.sequence),
    };
    if (!rejected && lock > 0n) reads.funds.reserve(walletId, lockAssetId, lock);
    // Recorded even when the engine rejects it: the clientOrderId is the order's either way.
    if (input.clientOrderId) reads.clientOrderIds.claim({ organizationId, clientOrderId: input.clientOrderId }, id);
    const placed: PlacedOrder = { orderId: id, rejected };
    return { events, order: { working, row, lock: rejected ? 0n : lock }, rejected, record: p.step && { step: p.step, value: placed } };
  }
}
