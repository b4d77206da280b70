import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { MatchingEngine, PlaceOrder, RejectReason } from '../../engine';
import { PageArgs, PageResult, toPage } from '../../graphql/types/page';
import { IdArg } from '../../graphql/types/id';
import { ErrorCode, KeelError } from '../../platform/errors';
import type { LedgerService } from '../ledger/ledger.service';
import { divideExact, formatScaled, normalizeDecimal, parseDecimal, pow10 } from '../../platform/decimal';
import type { MarketService, TradingRules } from '../markets/market.service';
import { OrderModel, TradeModel } from './order.model';
import { writeSettlement } from './order-persistence';
import type { Runtime } from './market-runtime';
import { isResting, Matched, NewOrder, newWorking, workingFromRow } from './working-order';
import { settle } from './settlement';
import { priceOf, quantityOf } from './order-units';
import { Liquidity, OrderSide, OrderStatus, OrderType, SettlementStatus, TimeInForce } from './order.domain';
import { BookLevelType, FillType, LedgerBalanceType, OrderBookType, OrderObject, PlaceOrderInput, TradeType } from './order.types';
import { fetchPage } from '../../platform/db/fetch-page';
import { StatementCheckFailed } from '../../platform/db/one-statement';
import type { ClaimStep } from '../../platform/idempotency';
import type { UnitOfWork } from '../../platform/db/unit-of-work';

const LIVE: OrderStatus[] = [OrderStatus.OPEN, OrderStatus.PARTIALLY_FILLED];
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Refusals decided by the market's rules (status, minimum, the fee a BUY locks) rather than by the book. */
const RULES_REFUSALS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['MARKET_HALTED', 'BELOW_MIN_NOTIONAL', 'INSUFFICIENT_FUNDS']);

/** A runtime's rules were found stale: the command runs again on rules reloaded from the record. */
class MarketRulesChanged extends Error {}


/** A placement waiting for its market's next group commit. */
interface QueuedPlacement {
  organizationId: string;
  walletId: string;
  id: string;
  input: PlaceOrderInput;
  /** The request's idempotency step the placement completes. */
  step?: ClaimStep;
  settled: boolean;
  resolve(outcome: PlacementOutcome): void;
  reject(e: unknown): void;
}

/** What became of a placement: rejected by the engine, or the order row as committed (absent when it must be read back). */
interface PlacementOutcome {
  rejected?: RejectReason;
  row?: OrderModel;
}

/** What an idempotent placement records: a retry answers from it. */
interface PlacedOrder {
  orderId: string;
  rejected?: RejectReason;
}

function recordingPlacement(m: Matched, orderId: string, step: ClaimStep | undefined): Matched {
  if (!step) return m;
  const value: PlacedOrder = { orderId, rejected: m.rejected };
  return { ...m, record: { step, value } };
}

/** Most placements matched and committed together in one transaction. */
const GROUP_COMMIT_MAX = 256;

/**
 * Available balances as one group of placements sees them: the committed balance less what the
 * earlier placements of the group lock. (What the group's fills would pay out is not counted, so a
 * group never promises more than the ledger will allow.)
 */
class GroupFunds {
  private readonly committed = new Map<string, Promise<bigint>>();
  private readonly reserved = new Map<string, bigint>();

  constructor(
    private readonly ledger: LedgerService,
    private readonly db: Knex,
  ) {}

  async available(walletId: string, assetId: string): Promise<bigint> {
    const key = `${walletId}|${assetId}`;
    this.prefetch([{ walletId, assetId }]);
    return (await this.committed.get(key)!) - (this.reserved.get(key) ?? 0n);
  }

  /** Reads the committed balances a group will ask for in one query rather than one each. */
  prefetch(keys: { walletId: string; assetId: string }[]): void {
    const missing = keys.filter((k) => !this.committed.has(`${k.walletId}|${k.assetId}`));
    if (!missing.length) return;
    const read = this.ledger.availableMany(this.db, missing);
    for (const k of missing) {
      const key = `${k.walletId}|${k.assetId}`;
      const amount = read.then((found) => found.get(key) ?? 0n);
      // A placement refused before it asks for its balance never awaits this: a failed read must not go unhandled.
      amount.catch(() => undefined);
      this.committed.set(key, amount);
    }
  }

  reserve(walletId: string, assetId: string, amount: bigint): void {
    const key = `${walletId}|${assetId}`;
    this.reserved.set(key, (this.reserved.get(key) ?? 0n) + amount);
  }
}

const REJECT_CODES: Record<RejectReason, ErrorCode> = {
  INVALID_PRICE: 'INVALID_PRICE',
  INVALID_QUANTITY: 'INVALID_QUANTITY',
  BELOW_MIN_NOTIONAL: 'BELOW_MIN_NOTIONAL',
  POST_ONLY_WOULD_TAKE: 'POST_ONLY_WOULD_TAKE',
  DUPLICATE_ORDER_ID: 'CONFLICT',
  ORDER_NOT_FOUND: 'NOT_FOUND',
};

/**
 * Orders: placement and cancellation through one in-process matching engine per market.
 *
 * Commands for a market run one at a time (a per-market promise chain). Each command is checked,
 * applied to the engine, and its effects — the order row, maker order updates, trades, ledger
 * moves and the market's sequence — are committed to PostgreSQL before the caller gets an answer
 * (placements that queue up meanwhile are committed together: see enqueuePlacement). If that transaction fails, the engine (already changed) is dropped and
 * rebuilt from PostgreSQL on the next command, so memory never runs ahead of the record.
 *
 * Money: a BUY locks quote, a SELL locks base, in the wallet's ledger balance. Fees are charged in
 * the quote asset: the buyer pays price × quantity + fee, the seller receives price × quantity − fee.
 */
export class OrderService {
  private readonly runtimes = new Map<string, Runtime>();
  private readonly viewRules = new Map<string, Promise<TradingRules>>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly placements = new Map<string, QueuedPlacement[]>();
  /** Facts that never change once true, cached for the placement path: wallet → its organisation, symbol → market id. */
  private readonly walletOwners = new Map<string, string>();
  private readonly marketIds = new Map<string, string>();

  constructor(
    private readonly db: Knex,
    private readonly markets: MarketService,
    private readonly ledger: LedgerService,
    private readonly uow: UnitOfWork,
  ) {
    // A changed market (fees, minimum, status) reloads its engine after the commands already queued.
    markets.onChange((marketId) =>
      this.serial(marketId, async () => {
        this.runtimes.delete(marketId);
        this.viewRules.delete(marketId);
      }),
    );
  }

  async place(organizationId: string, input: PlaceOrderInput): Promise<OrderObject> {
    const { step, recorded } = await this.uow.reserve<PlacedOrder>();
    if (recorded.found) return this.answerPlacement(organizationId, recorded.value.orderId, recorded.value.rejected);
    if (!IdArg.isUuid(input.walletId)) throw new KeelError('NOT_FOUND', 'Wallet not found');
    const walletId = input.walletId.toLowerCase();
    await this.assertOwnWallet(organizationId, walletId);
    const marketId = await this.marketId(input.market);
    if (input.clientOrderId !== undefined && input.clientOrderId !== null) await this.assertClientOrderIdFree(organizationId, input.clientOrderId);
    const id = randomUUID();
    const outcome = await this.enqueuePlacement(marketId, { organizationId, walletId, id, input, step });
    this.uow.committed('order.place');
    return this.answerPlacement(organizationId, id, outcome.rejected, outcome.row);
  }

  private async answerPlacement(organizationId: string, id: string, rejected: RejectReason | undefined, row?: OrderModel): Promise<OrderObject> {
    if (rejected) throw new KeelError(REJECT_CODES[rejected], `The order was rejected: ${rejected}`, { orderId: id, reason: rejected });
    return row ? (await this.views([row]))[0] : this.get(organizationId, id);
  }

  async cancel(organizationId: string, orderId: string): Promise<OrderObject> {
    const id = IdArg.uuid('Order', orderId);
    const { step, recorded } = await this.uow.reserve<{ orderId: string }>();
    if (recorded.found) return this.get(organizationId, id);
    const row = await this.row(organizationId, id);
    if (!LIVE.includes(row.status as OrderStatus)) throw new KeelError('ORDER_NOT_CANCELLABLE', `The order is ${row.status} and cannot be cancelled`, { status: row.status });
    await this.serial(row.marketId, () => this.retryingTransient(async () => {
      const current = await this.row(organizationId, id);
      if (!LIVE.includes(current.status as OrderStatus)) throw new KeelError('ORDER_NOT_CANCELLABLE', `The order is ${current.status} and cannot be cancelled`, { status: current.status });
      for (let attempt = 0; ; attempt++) {
        const rt = await this.runtime(row.marketId);
        const events = rt.engine.apply({ kind: 'cancel', id });
        if (events[0].type === 'rejected') {
          // The engine disagrees with the record: rebuild it from the record and try once more.
          this.runtimes.delete(row.marketId);
          if (attempt === 0) continue;
          throw new KeelError('INTERNAL_ERROR', 'The order book is out of step with the order record');
        }
        await this.commit(row.marketId, rt, [{ events, order: null, record: step && { step, value: { orderId: id } } }]);
        return;
      }
    }));
    this.uow.committed('order.cancel');
    return this.get(organizationId, id);
  }

  /** Cancels every live order that locks one of the assets, releasing its lock; the ids it cancelled. */
  async cancelLocking(assetIds: string[]): Promise<string[]> {
    if (assetIds.length === 0) return [];
    const live = await OrderModel.query(this.db).whereIn('lockAssetId', assetIds).whereIn('status', LIVE).orderBy('id');
    const cancelled: string[] = [];
    for (const o of live) {
      try {
        await this.cancel(o.organizationId, o.id);
        cancelled.push(o.id);
      } catch (e) {
        if (!(e instanceof KeelError && e.code === 'ORDER_NOT_CANCELLABLE')) throw e; // filled or cancelled meanwhile
      }
    }
    return cancelled;
  }

  async get(organizationId: string, orderId: string): Promise<OrderObject> {
    const row = await this.row(organizationId, IdArg.uuid('Order', orderId));
    return (await this.views([row]))[0];
  }

  async list(organizationId: string, args: PageArgs & { market?: string; status?: OrderStatus; walletId?: string }): Promise<PageResult<OrderObject>> {
    let marketId: string | undefined;
    if (args.market) {
      try {
        marketId = (await this.markets.row(args.market)).id;
      } catch (e) {
        if (e instanceof KeelError && e.status === 404) return toPage([], 0, args);
        throw e;
      }
    }
    if (args.walletId && !IdArg.isUuid(args.walletId)) return toPage([], 0, args);
    const q = OrderModel.query(this.db)
      .where({ organizationId })
      .modify((b) => {
        if (marketId) b.where('marketId', marketId);
        if (args.status) b.where('status', args.status);
        if (args.walletId) b.where('walletId', args.walletId.toLowerCase());
      });
    const { rows, total } = await fetchPage<OrderModel>(q, args, [{ column: 'createdAt', order: 'desc' }, { column: 'sequence', order: 'desc' }]);
    return toPage(await this.views(rows), total, args);
  }

  async fills(organizationId: string, orderId: string, page: PageArgs): Promise<PageResult<FillType>> {
    const order = await this.row(organizationId, IdArg.uuid('Order', orderId));
    const q = TradeModel.query(this.db).where((b) => b.where('makerOrderId', order.id).orWhere('takerOrderId', order.id));
    const { rows, total } = await fetchPage<TradeModel>(q, page, [{ column: 'sequence' }]);
    return toPage(
      rows.map((t) => {
        const maker = t.makerOrderId === order.id;
        return {
          id: `${t.id}:${maker ? 'M' : 'T'}`,
          tradeId: t.id,
          orderId: order.id,
          marketId: t.marketId,
          side: order.side as OrderSide,
          liquidity: maker ? Liquidity.MAKER : Liquidity.TAKER,
          price: normalizeDecimal(t.price),
          quantity: normalizeDecimal(t.quantity),
          fee: normalizeDecimal(maker ? t.makerFee : t.takerFee),
          sequence: String(t.sequence),
          createdAt: t.createdAt,
        };
      }),
      total,
      page,
    );
  }

  /** Trades of a wallet, visible only to an organisation that has placed an order with it (else 404). */
  async walletTrades(organizationId: string, walletId: string, page: PageArgs): Promise<PageResult<TradeType>> {
    const notFound = new KeelError('NOT_FOUND', 'Wallet not found');
    if (!IdArg.isUuid(walletId)) throw notFound;
    const id = walletId.toLowerCase();
    const placed = await OrderModel.query(this.db).where({ organizationId, walletId: id }).select('id').first();
    if (!placed) throw notFound;
    const q = TradeModel.query(this.db).where((b) => b.where('makerWalletId', id).orWhere('takerWalletId', id));
    const { rows, total } = await fetchPage<TradeModel>(q, page, [{ column: 'createdAt', order: 'desc' }, { column: 'sequence', order: 'desc' }]);
    return toPage(await this.tradeViews(rows), total, page);
  }

  async marketTrades(symbol: string, page: PageArgs): Promise<PageResult<TradeType>> {
    const market = await this.markets.row(symbol);
    const q = TradeModel.query(this.db).where({ marketId: market.id });
    const { rows, total } = await fetchPage<TradeModel>(q, page, [{ column: 'sequence', order: 'desc' }]);
    return toPage(await this.tradeViews(rows), total, page);
  }

  /** Depth from the market's engine, read in turn with the market's commands (so it is committed state). */
  async book(symbol: string, levels: number): Promise<OrderBookType> {
    const market = await this.markets.row(symbol);
    return this.serial(market.id, async () => {
      const { rules, engine } = await this.runtime(market.id);
      const depth = engine.depth(levels);
      const level = (l: { price: number; quantity: number; orders: number }): BookLevelType => ({
        price: priceOf(rules, BigInt(l.price)),
        quantity: quantityOf(rules, BigInt(l.quantity)),
        orders: l.orders,
      });
      return { market: rules.market.symbol, sequence: String(engine.sequence), bids: depth.bids.map(level), asks: depth.asks.map(level), timestamp: new Date() };
    });
  }

  /** Best bid and ask as decimal strings. */
  async touch(marketId: string): Promise<{ bestBid: string | null; bestAsk: string | null }> {
    return this.serial(marketId, async () => {
      const { rules, engine } = await this.runtime(marketId);
      const bid = engine.bestBid();
      const ask = engine.bestAsk();
      return { bestBid: bid === null ? null : priceOf(rules, BigInt(bid)), bestAsk: ask === null ? null : priceOf(rules, BigInt(ask)) };
    });
  }

  /** The wallet's ledger balances (the wallet must be the organisation's). */
  async walletBalances(organizationId: string, walletId: string): Promise<LedgerBalanceType[]> {
    if (!IdArg.isUuid(walletId)) throw new KeelError('NOT_FOUND', 'Wallet not found');
    const id = walletId.toLowerCase();
    await this.ledger.assertWallet(organizationId, id);
    const balances = await this.ledger.balances(id);
    return Promise.all(
      balances.map(async (b) => {
        const asset = await this.markets.assetDecimals(b.assetId);
        const decimals = asset?.decimals ?? 0;
        return { walletId: id, assetId: b.assetId, symbol: asset?.symbol ?? '', available: formatScaled(b.available, decimals), locked: formatScaled(b.locked, decimals), debt: formatScaled(b.debt, decimals) };
      }),
    );
  }

  /** Loads every market's engine now rather than on its first command (optional warm-up at start). */
  async warmUp(marketIds: string[]): Promise<void> {
    for (const id of marketIds) await this.serial(id, () => this.runtime(id));
  }

  // ---------------------------------------------------------------------------------------------

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

  /**
   * Group commit: placements that arrive while their market is busy wait in a queue; the next turn
   * matches all of them in arrival order and commits them in one transaction, and each answer
   * follows that commit. If the group's transaction fails, the engine is rebuilt and the group's
   * placements run again one at a time, so one bad placement cannot sink the others.
   */
  private enqueuePlacement(marketId: string, p: Omit<QueuedPlacement, 'settled' | 'resolve' | 'reject'>): Promise<PlacementOutcome> {
    return new Promise((resolve, reject) => {
      let queue = this.placements.get(marketId);
      if (!queue) {
        queue = [];
        this.placements.set(marketId, queue);
        void this.serial(marketId, () => this.drainPlacements(marketId));
      }
      queue.push({ ...p, settled: false, resolve, reject });
    });
  }

  private async drainPlacements(marketId: string): Promise<void> {
    const queue = this.placements.get(marketId) ?? [];
    this.placements.delete(marketId);
    for (let i = 0; i < queue.length; i += GROUP_COMMIT_MAX) {
      const group = queue.slice(i, i + GROUP_COMMIT_MAX);
      try {
        await this.placeGroup(marketId, group);
      } catch {
        // The group may have reached the engine without committing: rebuild it from the record.
        this.runtimes.delete(marketId);
        for (const p of group.filter((q) => !q.settled)) {
          await this.retryingTransient(() => this.placeNow(p.organizationId, p.walletId, p.id, marketId, p.input, p.step)).then(p.resolve, p.reject);
        }
      }
    }
  }

  private async placeGroup(marketId: string, group: QueuedPlacement[]): Promise<void> {
    const rt = await this.runtime(marketId);
    const funds = new GroupFunds(this.ledger, this.db);
    const { market } = rt.rules;
    funds.prefetch(group.map((p) => ({ walletId: p.walletId, assetId: p.input.side === OrderSide.BUY ? market.quoteAssetId : market.baseAssetId })));
    const matched: { p: QueuedPlacement; m: Matched }[] = [];
    const refused: { p: QueuedPlacement; e: unknown }[] = [];
    for (const p of group) {
      try {
        matched.push({ p, m: recordingPlacement(await this.match(rt, p.organizationId, p.walletId, p.id, marketId, p.input, funds), p.id, p.step) });
      } catch (e) {
        // Refused before it reached the engine: nothing to undo.
        refused.push({ p, e });
      }
    }
    await this.assertRulesCurrent(marketId, rt, refused.map((r) => r.e));
    for (const { p, e } of refused) {
      p.settled = true;
      p.reject(e);
    }
    if (!matched.length) return;
    const rows = await this.commit(marketId, rt, matched.map((x) => x.m));
    for (const { p, m } of matched) {
      p.settled = true;
      p.resolve({ rejected: m.rejected, row: rows.get(p.id) });
    }
  }

  /** One placement on its own: its own balance read, match and commit. */
  private async placeNow(organizationId: string, walletId: string, id: string, marketId: string, input: PlaceOrderInput, step?: ClaimStep): Promise<PlacementOutcome> {
    const rt = await this.runtime(marketId);
    let m: Matched;
    try {
      m = recordingPlacement(await this.match(rt, organizationId, walletId, id, marketId, input, new GroupFunds(this.ledger, this.db)), id, step);
    } catch (e) {
      await this.assertRulesCurrent(marketId, rt, [e]);
      throw e;
    }
    const rows = await this.commit(marketId, rt, [m]);
    return { rejected: m.rejected, row: rows.get(id) };
  }

  /**
   * Accepted orders are fenced by the rules version at commit (MarketService.sequencePart); a
   * refusal commits nothing, so before one decided by the rules is answered, the rules it was
   * decided on must still be the stored ones. Otherwise the runtime is dropped and the command
   * runs again: a node that missed a resume or a lowered minimum never keeps refusing.
   */
  private async assertRulesCurrent(marketId: string, rt: Runtime, refusals: unknown[]): Promise<void> {
    if (!refusals.some((e) => e instanceof KeelError && RULES_REFUSALS.has(e.code))) return;
    if ((await this.markets.rulesVersion(marketId)) === rt.rules.rulesVersion) return;
    if (this.runtimes.get(marketId) === rt) this.runtimes.delete(marketId);
    throw new MarketRulesChanged(`Market ${marketId}: rules changed since its engine was loaded`);
  }

  /** Checks a placement, reserves what it locks in `funds` and applies it to the engine (not yet committed). */
  private async match(rt: Runtime, organizationId: string, walletId: string, id: string, marketId: string, input: PlaceOrderInput, funds: GroupFunds): Promise<Matched> {
    const { rules, engine } = rt;
    const market = rules.market;
    if (market.status === 'HALTED') throw new KeelError('MARKET_HALTED', `Market ${market.symbol} is halted: it accepts no new orders`, { market: market.symbol });
    const type = input.type ?? OrderType.LIMIT;
    const timeInForce = input.timeInForce ?? TimeInForce.GTC;
    const postOnly = input.postOnly ?? false;

    const quantity = parseDecimal(input.quantity);
    if (!quantity || quantity.int <= 0n) throw KeelError.invalidField('quantity', 'must be a positive decimal');
    const lots = divideExact(quantity, rules.lot);
    if (lots === null) throw KeelError.invalidField('quantity', `must be a multiple of the lot size ${market.lotSize}`);
    if (lots > MAX_SAFE) throw KeelError.invalidField('quantity', 'is too large');

    let ticks: bigint | null = null;
    if (type === OrderType.LIMIT) {
      if (input.price === undefined || input.price === null) throw KeelError.validation([{ field: 'price', error: 'is required for LIMIT orders' }]);
      const price = parseDecimal(input.price);
      if (!price || price.int <= 0n) throw KeelError.invalidField('price', 'must be a positive decimal');
      ticks = divideExact(price, rules.tick);
      if (ticks === null) throw KeelError.invalidField('price', `must be a multiple of the tick size ${market.tickSize}`);
      if (ticks * lots > MAX_SAFE) throw KeelError.invalidField('quantity', 'price × quantity is too large');
    } else {
      if (input.price !== undefined && input.price !== null) throw KeelError.invalidField('price', 'must be absent for MARKET orders');
      if (postOnly) throw KeelError.invalidField('postOnly', 'applies to LIMIT orders only');
    }

    const side = input.side;
    const command: PlaceOrder = {
      kind: 'place',
      id,
      // Self-trade prevention is per wallet (the ledger account), as the engine documents.
      owner: walletId,
      side,
      type,
      price: ticks === null ? undefined : Number(ticks),
      quantity: Number(lots),
      timeInForce,
      postOnly,
    };
    // Refused before anything is locked; the engine's other rejections are recorded as REJECTED orders.
    if (engine.check(command) === 'BELOW_MIN_NOTIONAL') {
      throw new KeelError('BELOW_MIN_NOTIONAL', `price × quantity must be at least ${market.minNotional} ${market.quoteSymbol}`, { fields: [{ field: 'quantity', error: `price × quantity is below the minimum notional ${market.minNotional}` }] });
    }

    // What the order holds while it lives.
    const lockAssetId = side === OrderSide.BUY ? market.quoteAssetId : market.baseAssetId;
    const lock = side === OrderSide.SELL ? lots * rules.lotUnits : engine.buyLock(command.quantity, command.price) * rules.notionalUnit;
    if (lock > 0n) {
      const available = await funds.available(walletId, lockAssetId);
      if (available < lock) {
        const decimals = side === OrderSide.BUY ? rules.quoteDecimals : rules.baseDecimals;
        throw new KeelError('INSUFFICIENT_FUNDS', `Insufficient ${side === OrderSide.BUY ? market.quoteSymbol : market.baseSymbol} balance: the order needs ${formatScaled(lock, decimals)}, ${formatScaled(available, decimals)} is available`, {
          assetId: lockAssetId,
          required: formatScaled(lock, decimals),
          available: formatScaled(available, decimals),
        });
      }
    }

    const events = engine.apply(command);
    const rejected = events[0].type === 'rejected' ? events[0].reason : undefined;
    const working = newWorking({ id, organizationId, walletId, side, lots, lockAssetId, lock, rejected: rejected !== undefined });
    const order: NewOrder = {
      working,
      lock: rejected ? 0n : lock,
      row: {
        id,
        organizationId,
        marketId,
        walletId,
        clientOrderId: input.clientOrderId ?? null,
        side,
        type,
        timeInForce,
        postOnly,
        price: ticks === null ? null : priceOf(rules, ticks),
        quantity: quantityOf(rules, lots),
        priceTicks: ticks === null ? null : String(ticks),
        quantityLots: String(lots),
        sequence: String(events[0].sequence),
      },
    };
    if (!rejected && lock > 0n) funds.reserve(walletId, lockAssetId, lock);
    return { events, order, rejected };
  }

  /** Commits matched commands in one statement; on any failure the runtime is dropped (rebuilt from the record). */
  private async commit(marketId: string, rt: Runtime, commands: Matched[]): Promise<Map<string, OrderModel>> {
    try {
      const settlement = settle(rt.rules, rt.resting, commands);
      const newRows = new Map(commands.flatMap((c) => (c.order ? [[c.order.working.id, c.order.row] as const] : [])));
      const records = commands.flatMap((c) => (c.record ? [c.record] : []));
      const sequence = { marketId, from: rt.committedSequence, to: rt.engine.sequence, rulesVersion: rt.rules.rulesVersion };
      const written = await writeSettlement(this.db, this.ledger, this.markets, this.uow, sequence, settlement, newRows, records);
      rt.committedSequence = rt.engine.sequence;
      for (const w of settlement.orders) {
        if (isResting(w)) rt.resting.set(w.id, { ...w, isNew: false });
        else rt.resting.delete(w.id);
      }
      return written;
    } catch (e) {
      this.runtimes.delete(marketId);
      if ((e as { code?: string }).code === '23505' && String((e as { constraint?: string }).constraint).includes('client_order_id')) {
        throw new KeelError('DUPLICATE_ENTRY', 'clientOrderId is already used by another order of this organisation', { fields: [{ field: 'clientOrderId', error: 'is already used' }] });
      }
      throw e;
    }
  }

  /**
   * Runs a command again (on a rebuilt engine) when PostgreSQL aborted its statement for a
   * deadlock or a serialisation failure, or refused it because the market's sequence or rules
   * moved (another process wrote to the market, or the market was changed); the engine has been
   * dropped by then. A command refused three times is answered 503, having written nothing.
   */
  private async retryingTransient<T>(fn: () => Promise<T>): Promise<T> {
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

  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return next;
  }

  private async runtime(marketId: string): Promise<Runtime> {
    const cached = this.runtimes.get(marketId);
    if (cached) return cached;
    const rules = await this.markets.tradingRules(marketId);
    const open = await OrderModel.query(this.db).where({ marketId }).whereIn('status', LIVE).orderBy('restSequence').orderBy('id');
    const engine = new MatchingEngine(rules.engine, rules.sequence);
    engine.restore(open.map((o) => ({ id: o.id, owner: o.walletId, side: o.side, price: Number(o.priceTicks), remaining: Number(o.remainingLots) })));
    const rt: Runtime = { rules, engine, resting: new Map(open.map((o) => [o.id, workingFromRow(o)])), committedSequence: rules.sequence };
    this.runtimes.set(marketId, rt);
    this.viewRules.set(marketId, Promise.resolve(rules));
    return rt;
  }

  private rulesFor(marketId: string): Promise<TradingRules> {
    let rules = this.viewRules.get(marketId);
    if (!rules) {
      rules = this.markets.tradingRules(marketId);
      rules.catch(() => this.viewRules.delete(marketId));
      this.viewRules.set(marketId, rules);
    }
    return rules;
  }

  private async row(organizationId: string, id: string): Promise<OrderModel> {
    const row = await OrderModel.query(this.db).findOne({ id, organizationId });
    if (!row) throw new KeelError('NOT_FOUND', 'Order not found');
    return row;
  }

  private async assertClientOrderIdFree(organizationId: string, clientOrderId: string): Promise<void> {
    const taken = await OrderModel.query(this.db).findOne({ organizationId, clientOrderId });
    if (taken) {
      throw new KeelError('DUPLICATE_ENTRY', 'clientOrderId is already used by another order of this organisation', { fields: [{ field: 'clientOrderId', error: 'is already used' }], orderId: taken.id });
    }
  }

  private async views(rows: OrderModel[]): Promise<OrderObject[]> {
    const rules = new Map<string, TradingRules>();
    for (const id of new Set(rows.map((r) => r.marketId))) rules.set(id, await this.rulesFor(id));
    return rows.map((o) => {
      const r = rules.get(o.marketId)!;
      const filled = BigInt(o.filledLots);
      const total = BigInt(o.quantityLots);
      return {
        id: o.id,
        clientOrderId: o.clientOrderId,
        marketId: o.marketId,
        market: r.market.symbol,
        walletId: o.walletId,
        side: o.side as OrderSide,
        type: o.type as OrderType,
        timeInForce: o.timeInForce as TimeInForce,
        postOnly: o.postOnly,
        price: o.price === null ? null : normalizeDecimal(o.price),
        quantity: normalizeDecimal(o.quantity),
        filledQuantity: quantityOf(r, filled),
        remainingQuantity: quantityOf(r, total - filled),
        averagePrice: filled > 0n ? formatScaled((BigInt(o.filledNotional) * r.tick.int * pow10(6)) / filled, r.tick.scale + 6) : null,
        fee: formatScaled(BigInt(o.feesPaid), r.quoteDecimals),
        status: o.status as OrderStatus,
        statusReason: o.statusReason,
        sequence: String(o.sequence),
        createdAt: o.createdAt,
        updatedAt: o.updatedAt,
      };
    });
  }

  private async tradeViews(rows: TradeModel[]): Promise<TradeType[]> {
    const symbols = new Map<string, string>();
    for (const id of new Set(rows.map((r) => r.marketId))) symbols.set(id, (await this.rulesFor(id)).market.symbol);
    return rows.map((t) => ({
      id: t.id,
      marketId: t.marketId,
      market: symbols.get(t.marketId)!,
      sequence: String(t.sequence),
      makerOrderId: t.makerOrderId,
      takerOrderId: t.takerOrderId,
      makerWalletId: t.makerWalletId,
      takerWalletId: t.takerWalletId,
      takerSide: t.takerSide as OrderSide,
      price: normalizeDecimal(t.price),
      quantity: normalizeDecimal(t.quantity),
      makerFee: normalizeDecimal(t.makerFee),
      takerFee: normalizeDecimal(t.takerFee),
      settlementBatchId: t.settlementBatchId,
      settlementStatus: t.settlementStatus as SettlementStatus,
      createdAt: t.createdAt,
    }));
  }
}
