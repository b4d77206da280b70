import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import type { QueryBuilder } from 'objection';
import type { RejectReason } from '../../engine';
import { Ids } from '../../platform/ids';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { ErrorCode, KeelError } from '../../platform/errors';
import { engineRejection } from './placement-checks';
import type { LedgerService } from '../ledger';
import type { MarketService } from '../markets';
import { MarketRuntimes } from './market-runtime';
import { LIVE_STATUSES, Order, OrderSide, OrderStatus, OrderType, PlaceOrderInput, ReplaceOrderInput, TimeInForce } from './order.domain';
import { OrderModel } from './order.model';
import { OrderQueries } from './order-queries';
import { CancelOnItsOwn, PlacedOrder, PlacementOutcome, PlacementQueue, Replacement } from './placement-queue';
import { formatMultiple } from '../../platform/decimal';
import { ShardGate, SOLE_NODE } from './shard-gate';
import type { WalletExits } from './wallet-exits';

/** A market as this node's engine holds it, for the engine status. */
export interface MarketEngineView {
  marketId: string;
  symbol: string;
  /** The market's last committed sequence number. */
  sequence: string;
  /** Placements waiting for the market's next group commit. */
  queueDepth: number;
}
import type { CommitListener } from './committed-change';
import type { Logger } from '../../platform/logger';


/**
 * Orders: placement and cancellation through one in-process matching engine per market
 * (MarketRuntimes), placements and cancels committed in groups (PlacementQueue).
 *
 * Money: a BUY locks quote, a SELL locks base, in the wallet's ledger balance. Fees are charged in
 * the quote asset: the buyer pays price × quantity + fee, the seller receives price × quantity − fee.
 */
export class OrderService {
  /** Reads of orders, trades and the book, served from the same market runtimes. */
  readonly queries: OrderQueries;
  private readonly runtimes: MarketRuntimes;
  private readonly placements: PlacementQueue;
  /** Facts that never change once true, cached for the placement path: wallet → its organisation, symbol → market id. */
  private readonly walletOwners = new Map<string, string>();
  private readonly marketIds = new Map<string, string>();

  constructor(
    private readonly db: Knex,
    private readonly markets: MarketService,
    private readonly ledger: LedgerService,
    private readonly uow: UnitOfWork,
    private readonly gate: ShardGate = SOLE_NODE,
    logger?: Logger,
  ) {
    this.runtimes = new MarketRuntimes(db, markets, ledger, uow, gate, logger);
    this.queries = new OrderQueries(db, markets, this.runtimes);
    this.placements = new PlacementQueue(db, ledger, this.runtimes);
  }

  async place(organizationId: string, input: PlaceOrderInput): Promise<Order> {
    const { step, recorded } = await this.uow.reserve<PlacedOrder>();
    if (recorded.found) return this.answerPlacement(organizationId, recorded.value.orderId, recorded.value.rejected);
    if (!Ids.isUuid(input.walletId)) throw new KeelError('NOT_FOUND', 'Wallet not found');
    const walletId = input.walletId.toLowerCase();
    await this.assertOwnWallet(organizationId, walletId);
    const marketId = await this.marketId(input.market);
    // Only the leader of the market's shard takes orders (409 NOT_LEADER, transient, elsewhere).
    this.gate.assertAccepting((await this.runtimes.rules(marketId)).market.symbol);
    const id = randomUUID();
    const outcome = await this.placements.place({ organizationId, walletId, marketId, id, input, step });
    this.uow.committed('order.place');
    return this.answerPlacement(organizationId, id, outcome.rejected, outcome.row);
  }

  private async answerPlacement(organizationId: string, id: string, rejected: RejectReason | undefined, row?: OrderModel): Promise<Order> {
    if (rejected) throw engineRejection(id, rejected);
    return this.queries.placed(organizationId, id, row);
  }

  /**
   * Cancel-replace (amend): cancels a live order and places its replacement in one commit, or does
   * neither. The replacement is checked as any placement (market rules, funds, the engine) and may
   * lock what the old order releases; a retry with the same Idempotency-Key answers the same order.
   */
  async replace(organizationId: string, orderId: string, input: ReplaceOrderInput): Promise<Order> {
    const replaces = Ids.uuid('Order', orderId);
    const { step, recorded } = await this.uow.reserve<PlacedOrder>();
    if (recorded.found) return this.answerPlacement(organizationId, recorded.value.orderId, recorded.value.rejected);
    // An order resting in this node's book needs no read: the runtime holds its row (whose state columns
    // may be stale; the rest the replacement keeps is taken as the replace is applied).
    const old = this.runtimes.restingRow(organizationId, replaces) ?? (await this.queries.row(organizationId, replaces));
    const rules = await this.runtimes.rules(old.marketId);
    this.gate.assertAccepting(rules.market.symbol);
    assertCancellable(old);
    const replacement: Replacement = {
      organizationId,
      walletId: old.walletId,
      marketId: old.marketId,
      id: randomUUID(),
      replaces,
      keepsRest: input.quantity === undefined || input.quantity === null,
      step,
      input: {
        walletId: old.walletId,
        market: rules.market.symbol,
        side: old.side as OrderSide,
        type: old.type as OrderType,
        price: input.price ?? old.price,
        // Without a quantity, the rest as the replace is applied (keepsRest); this is the rest as held now.
        quantity: input.quantity ?? formatMultiple(rules.lot, BigInt(old.remainingLots)),
        timeInForce: input.timeInForce ?? (old.timeInForce as TimeInForce),
        postOnly: input.postOnly ?? old.postOnly,
        clientOrderId: input.clientOrderId ?? null,
      },
    };
    let outcome: PlacementOutcome;
    try {
      outcome = await this.placements.replace(replacement);
    } catch (e) {
      if (!(e instanceof CancelOnItsOwn)) throw e;
      // After its group, against the record: the old order may have been filled or cancelled meanwhile.
      outcome = await this.runtimes.serial(old.marketId, () =>
        this.runtimes.retryingTransient(async () => {
          assertCancellable(await this.queries.row(organizationId, replaces));
          return this.placements.replaceAlone(replacement);
        }),
      );
    }
    this.uow.committed('order.replace');
    return this.answerPlacement(organizationId, replacement.id, outcome.rejected, outcome.row);
  }

  async cancel(organizationId: string, orderId: string): Promise<Order> {
    return this.cancelAs(organizationId, orderId, 'leader');
  }

  /** `leader`: a caller's cancel, taken only by the leader of the market's shard; `maintenance`: Keel's own (a chain reset), on any node, fenced by the shard's current token. */
  private async cancelAs(organizationId: string, orderId: string, as: 'leader' | 'maintenance'): Promise<Order> {
    const id = Ids.uuid('Order', orderId);
    const { step, recorded } = await this.uow.reserve<{ orderId: string }>();
    if (recorded.found) return this.queries.get(organizationId, id);
    // A caller's cancel of an order resting in this node's book needs no read: the runtime holds its row.
    const row = (as === 'leader' && this.runtimes.restingRow(organizationId, id)) || (await this.queries.row(organizationId, id));
    if (as === 'leader') this.gate.assertAccepting((await this.runtimes.rules(row.marketId)).market.symbol);
    assertCancellable(row);
    if (as === 'leader') {
      // In the market's next group commit, with the placements: no statement of its own.
      try {
        const state = await this.placements.cancel({ organizationId, marketId: row.marketId, orderId: id, step });
        this.uow.committed('order.cancel');
        // The row (the runtime's, or read before) with the state the commit wrote: the answer need not read it back.
        return this.queries.placed(organizationId, id, state && Object.assign({}, row, state));
      } catch (e) {
        if (!(e instanceof CancelOnItsOwn)) throw e;
      }
    }
    // On its own, against the record: a maintenance cancel, or one the group did not take.
    await this.runtimes.serial(row.marketId, () =>
      this.runtimes.retryingTransient(async () => {
        assertCancellable(await this.queries.row(organizationId, id));
        for (let attempt = 0; ; attempt++) {
          const rt = as === 'leader' ? await this.runtimes.runtime(row.marketId) : await this.runtimes.maintenance(row.marketId);
          const events = rt.engine.apply({ kind: 'cancel', id });
          if (events[0].type === 'rejected') {
            // The engine disagrees with the record: rebuild it from the record and try once more.
            this.runtimes.drop(row.marketId);
            if (attempt === 0) continue;
            throw new KeelError('INTERNAL_ERROR', 'The order book is out of step with the order record');
          }
          await this.runtimes.commit(row.marketId, rt, [{ events, order: null, record: step && { step, value: { orderId: id } } }]);
          return;
        }
      }),
    );
    this.uow.committed('order.cancel');
    return this.queries.get(organizationId, id);
  }

  /** Cancels every live order that locks one of the assets, releasing its lock; the ids it cancelled. */
  async cancelLocking(assetIds: string[]): Promise<string[]> {
    if (assetIds.length === 0) return [];
    return this.cancelLive(OrderModel.query(this.db).whereIn('lockAssetId', assetIds));
  }

  /**
   * Cancels every live order of these wallets that locks one of the assets (a chain's: the orders
   * on its markets), as Keel's own cancel on any node, with the usual events; the ids it cancelled.
   */
  async cancelOfWallets(walletIds: string[], assetIds: string[]): Promise<string[]> {
    if (walletIds.length === 0 || assetIds.length === 0) return [];
    return this.cancelLive(OrderModel.query(this.db).whereIn('walletId', walletIds).whereIn('lockAssetId', assetIds));
  }

  /** From now on, a placement by a wallet that asked to exit its market's settlement contract is refused (TRADING_EXIT_REQUESTED): settlement tells which (services.ts). */
  refuseExitsOf(exits: WalletExits): void {
    this.placements.exits = exits;
  }

  private async cancelLive(orders: QueryBuilder<OrderModel>): Promise<string[]> {
    const live = await orders.whereIn('status', LIVE_STATUSES).orderBy('id');
    const cancelled: string[] = [];
    for (const o of live) {
      try {
        await this.cancelAs(o.organizationId, o.id, 'maintenance');
        cancelled.push(o.id);
      } catch (e) {
        if (!(e instanceof KeelError && e.code === 'ORDER_NOT_CANCELLABLE')) throw e; // filled or cancelled meanwhile
      }
    }
    return cancelled;
  }

  /** Hears every commit this process makes (the realtime publisher). */
  onCommitted(listener: CommitListener): void {
    this.runtimes.onCommitted(listener);
  }

  /** Loads every market's engine now rather than on its first command (optional warm-up at start). */
  async warmUp(marketIds: string[]): Promise<void> {
    for (const id of marketIds) await this.runtimes.serial(id, () => this.runtimes.runtime(id));
  }

  /** This node has just taken `shard`: each of its markets' books is rebuilt from PostgreSQL, after the commands already queued. */
  async rebuildShard(shardOf: (symbol: string) => number, shard: number): Promise<void> {
    for (const m of await this.marketsOf(shardOf, shard)) {
      await this.runtimes.serial(m.id, async () => {
        this.runtimes.drop(m.id);
        await this.runtimes.runtime(m.id);
      });
    }
  }

  /** This node no longer leads `shard`: its markets' books are dropped now (commands still queued find it gone and answer NOT_LEADER). */
  async dropShard(shardOf: (symbol: string) => number, shard: number): Promise<void> {
    for (const m of await this.marketsOf(shardOf, shard)) this.runtimes.drop(m.id);
  }

  /** Sequence (as the market's runtime has committed it, else as stored) and queue depth of the markets of these shards. */
  async engineView(shardOf: (symbol: string) => number, shards: number[]): Promise<MarketEngineView[]> {
    const wanted = new Set(shards);
    return (await this.markets.sequences())
      .filter((m) => wanted.has(shardOf(m.symbol)))
      .map((m) => ({ marketId: m.id, symbol: m.symbol, sequence: String(this.runtimes.committedSequence(m.id) ?? m.sequence), queueDepth: this.placements.depth(m.id) }));
  }

  private async marketsOf(shardOf: (symbol: string) => number, shard: number): Promise<{ id: string; symbol: string }[]> {
    return (await this.markets.sequences()).filter((m) => shardOf(m.symbol) === shard);
  }

  private async assertOwnWallet(organizationId: string, walletId: string): Promise<void> {
    if (this.walletOwners.get(walletId) === organizationId) return;
    await this.ledger.assertWallet(organizationId, walletId);
    if (this.walletOwners.size >= 100_000) this.walletOwners.clear();
    this.walletOwners.set(walletId, organizationId);
  }

  private async marketId(symbol: string): Promise<string> {
    const cached = this.marketIds.get(symbol);
    if (cached) return cached;
    const id = (await this.markets.row(symbol)).id;
    if (this.marketIds.size >= 10_000) this.marketIds.clear();
    this.marketIds.set(symbol, id);
    return id;
  }
}

function assertCancellable(order: OrderModel): void {
  if (!LIVE_STATUSES.includes(order.status as OrderStatus)) throw new KeelError('ORDER_NOT_CANCELLABLE', `The order is ${order.status} and cannot be cancelled`, { status: order.status });
}
