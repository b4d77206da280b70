import { KeelError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { SharedStream } from '../../platform/events/shared-stream';
import type { CommittedChange, OrderChange, OrderQueries, OrderModel } from '../orders';
import { Fill, Liquidity, Order, OrderSide, OrderStatus } from '../orders';
import type { WalletBalance, WalletBalances } from '../ledger';
import { stopAll } from './realtime-hub';
import type { RealtimeHub } from './realtime-hub';
import type { PrivateChannel } from './channels';

/** Immutable parts of orders remembered per organisation feed (the state comes with each change). */
const MAX_REMEMBERED_ORDERS = 10_000;
/** Changes waiting to be turned into messages; one more (PostgreSQL far behind) and the feeds end with an error rather than hold it. */
const MAX_WAITING = 5_000;
/** A channel's part of a change that fails (PostgreSQL) is tried again after these pauses; then its subscriptions end with an error. */
const RETRY_DELAYS_MS = [200, 1_000];
/** What the feeds do with a channel's stream whatever it carries: whether anyone listens, and ending it with an error. */
type Channel = Pick<SharedStream<object>, 'size' | 'fail'>;
const FINAL: ReadonlySet<string> = new Set([OrderStatus.FILLED, OrderStatus.CANCELLED, OrderStatus.REJECTED, OrderStatus.EXPIRED]);

/**
 * The error a private feed's subscriptions end with when this node could not deliver one of their
 * changes: the client cannot know what it missed, so it subscribes again and reads the current
 * state with the queries (docs/trading-and-realtime.md, "Realtime feeds").
 */
export function feedInterrupted(channel: PrivateChannel, why: string): KeelError {
  return new KeelError('SERVICE_UNAVAILABLE', `The ${channel} feed missed changes (${why}); subscribe again, then read the current state with the queries`, { channel });
}

/**
 * One organisation's private feeds on this node: its orders (every state a commit leaves them
 * in), its fills and its wallets' trading balances. Each change is turned into messages once for
 * all of the organisation's subscribers, in commit order; another organisation's orders never
 * enter (the hub routes a change only to the organisations it concerns, and each message is
 * filtered again here). A change is never skipped in silence: when a channel's part of it still
 * fails after its retries, that channel's subscriptions end with `feedInterrupted`, and when more
 * than MAX_WAITING changes wait (PostgreSQL far behind), or this node hears the bus again after
 * losing Redis (what was published meanwhile never reached it), every channel's do.
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
    private readonly logger?: Pick<Logger, 'warn' | 'error'>,
  ) {
    const leave = () => this.leaveIfEmpty();
    this.orders = new SharedStream<Order>(leave);
    this.fills = new SharedStream<Fill>(leave);
    this.balances = new SharedStream<WalletBalance>(leave);
  }

  start(hub: RealtimeHub): void {
    if (this.stopListening) return;
    const stopResumed = hub.onResumed(() => {
      this.logger?.warn({ organizationId: this.organizationId }, 'realtime: this node lost the realtime bus (Redis) for a while; the organisation\'s feeds end with an error');
      this.interrupt('this node lost the realtime bus for a while');
    });
    const stopChanges = hub.onOrganization(this.organizationId, (c) => {
      if (this.waiting >= MAX_WAITING) {
        this.logger?.error({ organizationId: this.organizationId, waiting: this.waiting }, 'realtime: an organisation feed fell behind; its subscriptions end with an error');
        this.interrupt(`more than ${MAX_WAITING} changes waiting on this node`);
        return;
      }
      this.waiting++;
      this.chain = this.chain
        .then(() => this.process(c))
        .catch((error: unknown) => {
          this.logger?.error({ organizationId: this.organizationId, err: error }, 'realtime: an organisation feed failed on a change; its subscriptions end with an error');
          this.interrupt('a change could not be delivered');
        })
        .finally(() => this.waiting--);
    });
    this.stopListening = stopAll(stopResumed, stopChanges);
  }

  /** Ends every channel's subscriptions with an error (they missed, or will miss, a change). */
  private interrupt(why: string): void {
    const channels: [PrivateChannel, Channel][] = [
      ['orders', this.orders],
      ['fills', this.fills],
      ['balances', this.balances],
    ];
    for (const [channel, stream] of channels) stream.fail(feedInterrupted(channel, why));
  }

  private leaveIfEmpty(): void {
    if (this.orders.size + this.fills.size + this.balances.size > 0) return;
    this.stopListening?.();
    this.stopListening = null;
    this.onEmpty();
  }

  private async process(change: CommittedChange): Promise<void> {
    await this.deliver(this.fills, 'fills', change, () => this.emitFills(change));
    await this.deliver(this.orders, 'orders', change, () => this.emitOrders(change));
    await this.deliver(this.balances, 'balances', change, () => this.emitBalances(change));
  }

  /**
   * One channel's part of a change, while it has subscribers. A failure (a query that PostgreSQL
   * did not answer) is logged and tried again after each of RETRY_DELAYS_MS (a part emits only once
   * it has computed everything, so a retry sends nothing twice); one that still fails ends the
   * channel's subscriptions with an error.
   */
  private async deliver(stream: Channel, channel: PrivateChannel, change: CommittedChange, part: () => void | Promise<void>): Promise<void> {
    for (let attempt = 0; stream.size; attempt++) {
      try {
        await part();
        return;
      } catch (error) {
        const context = { organizationId: this.organizationId, channel, marketId: change.marketId, attempt: attempt + 1, err: error };
        if (attempt >= RETRY_DELAYS_MS.length) {
          this.logger?.error(context, 'realtime: a change could not be delivered; the channel\'s subscriptions end with an error');
          stream.fail(feedInterrupted(channel, 'a change could not be read from the database'));
          return;
        }
        this.logger?.warn(context, 'realtime: a change could not be delivered; trying again');
        await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[attempt]));
      }
    }
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
    const views = await this.queries.views(rows);
    for (const o of mine) if (FINAL.has(o.status)) this.remembered.delete(o.id);
    for (const order of views) this.orders.emit(order);
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
    const moved: WalletBalance[] = [];
    for (const walletId of new Set(touched.map((b) => b.walletId))) {
      const assets = new Set(touched.filter((b) => b.walletId === walletId).map((b) => b.assetId));
      for (const balance of await this.walletBalances.of(this.organizationId, walletId)) if (assets.has(balance.assetId)) moved.push(balance);
    }
    for (const balance of moved) this.balances.emit(balance);
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
