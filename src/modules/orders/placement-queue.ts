import { Knex } from 'knex';
import type { RejectReason } from '../../engine';
import { formatMultiple, formatScaled } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import type { ClaimStep } from '../../platform/idempotency';
import type { LedgerService } from '../ledger';
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

interface QueuedPlacement extends Placement {
  settled: boolean;
  resolve(outcome: PlacementOutcome): void;
  reject(e: unknown): void;
}

/** Most placements matched and committed together in one transaction. */
const GROUP_COMMIT_MAX = 256;

/**
 * Group commit: placements that arrive while their market is busy wait in a queue; the next turn
 * matches all of them in arrival order and commits them in one transaction, and each answer
 * follows that commit. If the group's transaction fails, the engine is rebuilt and the group's
 * placements run again one at a time, so one bad placement cannot sink the others.
 */
export class PlacementQueue {
  private readonly queues = new Map<string, QueuedPlacement[]>();

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
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(p.marketId);
      if (!queue) {
        queue = [];
        this.queues.set(p.marketId, queue);
        void this.runtimes.serial(p.marketId, () => this.drain(p.marketId));
      }
      queue.push(Object.assign({}, p, { settled: false, resolve, reject }));
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
        for (const p of group.filter((q) => !q.settled)) {
          await this.runtimes.retryingTransient(() => this.placeAlone(p)).then(p.resolve, p.reject);
        }
      }
    }
  }

  private async placeGroup(marketId: string, group: QueuedPlacement[]): Promise<void> {
    const rt = await this.runtimes.runtime(marketId);
    const funds = new GroupFunds(this.ledger, this.db);
    const { market } = rt.rules;
    funds.prefetch(group.map((p) => ({ walletId: p.walletId, assetId: p.input.side === OrderSide.BUY ? market.quoteAssetId : market.baseAssetId })));
    const matched: { p: QueuedPlacement; m: Matched }[] = [];
    const refused: { p: QueuedPlacement; e: unknown }[] = [];
    for (const p of group) {
      try {
        matched.push({ p, m: await this.match(rt, p, funds) });
      } catch (e) {
        // Refused before it reached the engine: nothing to undo.
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
      p.resolve({ rejected: m.rejected, row: rows.get(p.id) });
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
