import { SharedStream } from '../../platform/events/shared-stream';
import type { CommittedChange, OrderChange, OrderQueries, OrderModel } from '../orders';
import { Fill, Liquidity, Order, OrderSide, OrderStatus } from '../orders';
import type { WalletBalance, WalletBalances } from '../ledger';
import type { RealtimeHub } from './realtime-hub';

/** Immutable parts of orders remembered per organisation feed (the state comes with each change). */
const MAX_REMEMBERED_ORDERS = 10_000;
/** Changes waiting to be turned into messages; past this (PostgreSQL far behind) further ones are dropped rather than held. */
const MAX_WAITING = 5_000;
const FINAL: ReadonlySet<string> = new Set([OrderStatus.FILLED, OrderStatus.CANCELLED, OrderStatus.REJECTED, OrderStatus.EXPIRED]);

/**
 * One organisation's private feeds on this node: its orders (every state a commit leaves them
 * in), its fills and its wallets' trading balances. Each change is turned into messages once for
 * all of the organisation's subscribers, in commit order; another organisation's orders never
 * enter (the hub routes a change only to the organisations it concerns, and each message is
 * filtered again here).
 */
export class OrganizationFeeds {
  readonly orders: SharedStream<Order>;
  readonly fills: SharedStream<Fill>;
  readonly balances: SharedStream<WalletBalance>;
  private readonly remembered = new Map<string, OrderModel>();
  private chain: Promise<void> = Promise.resolve();
  private waiting = 0;
  private stopListening: (() => void) | null = null;

  constructor(
    private readonly organizationId: string,
    private readonly queries: OrderQueries,
    private readonly walletBalances: WalletBalances,
    private readonly onEmpty: () => void,
  ) {
    const leave = () => this.leaveIfEmpty();
    this.orders = new SharedStream<Order>(leave);
    this.fills = new SharedStream<Fill>(leave);
    this.balances = new SharedStream<WalletBalance>(leave);
  }

  start(hub: RealtimeHub): void {
    this.stopListening ??= hub.onOrganization(this.organizationId, (c) => {
      if (this.waiting >= MAX_WAITING) return;
      this.waiting++;
      this.chain = this.chain
        .then(() => this.process(c))
        .catch(() => undefined)
        .finally(() => this.waiting--);
    });
  }

  private leaveIfEmpty(): void {
    if (this.orders.size + this.fills.size + this.balances.size > 0) return;
    this.stopListening?.();
    this.stopListening = null;
    this.onEmpty();
  }

  private async process(change: CommittedChange): Promise<void> {
    if (this.fills.size) this.emitFills(change);
    if (this.orders.size) await this.emitOrders(change);
    if (this.balances.size) await this.emitBalances(change);
  }

  private async emitOrders(change: CommittedChange): Promise<void> {
    const mine = change.orders.filter((o) => o.organizationId === this.organizationId);
    if (!mine.length) return;
    for (const o of mine) if (o.created) this.remember({ ...o.created, createdAt: new Date(o.created.createdAt), updatedAt: new Date(o.created.updatedAt) } as OrderModel);
    const missing = mine.filter((o) => !this.remembered.has(o.id)).map((o) => o.id);
    if (missing.length) for (const row of await this.queries.rowsByIds(this.organizationId, missing)) this.remember(row);
    const updatedAt = new Date(change.committedAt);
    const rows = mine.flatMap((o) => {
      const base = this.remembered.get(o.id);
      return base ? [withState(base, o, updatedAt)] : [];
    });
    for (const o of mine) if (FINAL.has(o.status)) this.remembered.delete(o.id);
    for (const order of await this.queries.views(rows)) this.orders.emit(order);
  }

  private emitFills(change: CommittedChange): void {
    const createdAt = new Date(change.committedAt);
    for (const t of change.trades) {
      const sides: [boolean, string, string, OrderSide][] = [
        [t.makerOrganizationId === this.organizationId, t.makerOrderId, t.makerFee, t.takerSide === OrderSide.BUY ? OrderSide.SELL : OrderSide.BUY],
        [t.takerOrganizationId === this.organizationId, t.takerOrderId, t.takerFee, t.takerSide],
      ];
      sides.forEach(([mine, orderId, fee, side], i) => {
        if (!mine) return;
        const maker = i === 0;
        this.fills.emit({
          id: `${t.id}:${maker ? 'M' : 'T'}`,
          tradeId: t.id,
          orderId,
          marketId: change.marketId,
          side,
          liquidity: maker ? Liquidity.MAKER : Liquidity.TAKER,
          price: t.price,
          quantity: t.quantity,
          fee,
          sequence: t.sequence,
          createdAt,
        });
      });
    }
  }

  private async emitBalances(change: CommittedChange): Promise<void> {
    const touched = change.balances.filter((b) => b.organizationId === this.organizationId);
    for (const walletId of new Set(touched.map((b) => b.walletId))) {
      const assets = new Set(touched.filter((b) => b.walletId === walletId).map((b) => b.assetId));
      for (const balance of await this.walletBalances.of(this.organizationId, walletId)) if (assets.has(balance.assetId)) this.balances.emit(balance);
    }
  }

  private remember(row: OrderModel): void {
    if (this.remembered.size >= MAX_REMEMBERED_ORDERS) this.remembered.clear();
    this.remembered.set(row.id, row);
  }
}

function withState(base: OrderModel, o: OrderChange, updatedAt: Date): OrderModel {
  return {
    ...base,
    status: o.status as OrderModel['status'],
    statusReason: o.statusReason,
    remainingLots: o.remainingLots,
    filledLots: o.filledLots,
    filledNotional: o.filledNotional,
    feesPaid: o.feesPaid,
    updatedAt,
  } as OrderModel;
}
