import { Knex } from 'knex';
import { Ids } from '../../platform/ids';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { fetchPage, type OrderBy } from '../../platform/db/fetch-page';
import { formatMultiple, normalizeDecimal } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import type { MarketService } from '../markets';
import type { MarketRuntimes } from './market-runtime';
import { BookLevel, Fill, LIVE_STATUSES, Liquidity, MarketTrade, Order, OrderBook, OrderSide, OrderStatus, Trade } from './order.domain';
import { OrderModel, TradeModel } from './order.model';
import { OrderViews } from './order-views';

/**
 * Newest first, for an organisation's orders and a wallet's trades. Rows of several markets' group
 * commits can share a time and a sequence (unique only within a market): the id breaks the tie, so
 * LIMIT/OFFSET pages neither repeat nor skip a row.
 */
const NEWEST_FIRST: OrderBy = [
  { column: 'createdAt', order: 'desc' },
  { column: 'sequence', order: 'desc' },
  { column: 'id', order: 'desc' },
];

/** Reads of orders, fills, trades and the live book. An organisation sees only its own orders (else 404). */
export class OrderQueries {
  private readonly shapes: OrderViews;

  constructor(
    private readonly db: Knex,
    private readonly markets: MarketService,
    private readonly runtimes: MarketRuntimes,
  ) {
    this.shapes = new OrderViews(runtimes);
  }

  async get(organizationId: string, orderId: string): Promise<Order> {
    const row = await this.row(organizationId, Ids.uuid('Order', orderId));
    return (await this.shapes.orders([row]))[0];
  }

  /** The order as committed, shaped for the answer without reading it back when the placement has its row. */
  async placed(organizationId: string, id: string, row?: OrderModel): Promise<Order> {
    return row ? (await this.shapes.orders([row]))[0] : this.get(organizationId, id);
  }

  async row(organizationId: string, id: string): Promise<OrderModel> {
    // By the primary key alone, the organisation checked here: a plan PostgreSQL caches for
    // `id AND organization_id` while the table is small may take the organisation's index, and then
    // reads every order of the organisation for each lookup for as long as the connection lives.
    // Through knex, not an objection model: the same columns (camelCased by the knex mappers) for
    // about 50 µs less CPU a lookup, on every read by id (and a cancel of an order this node does not hold).
    const row: OrderModel | undefined = await this.db('orders').where({ id }).first();
    if (!row || row.organizationId !== organizationId) throw new KeelError('NOT_FOUND', 'Order not found');
    return row;
  }

  async list(organizationId: string, args: PageWindow & { market?: string; status?: OrderStatus; walletId?: string }): Promise<PageResult<Order>> {
    let marketId: string | undefined;
    if (args.market) {
      try {
        marketId = (await this.markets.row(args.market)).id;
      } catch (e) {
        if (e instanceof KeelError && e.status === 404) return toPage([], 0, args);
        throw e;
      }
    }
    if (args.walletId && !Ids.isUuid(args.walletId)) return toPage([], 0, args);
    const q = OrderModel.query(this.db)
      .where({ organizationId })
      .modify((b) => {
        if (marketId) b.where('marketId', marketId);
        if (args.status) b.where('status', args.status);
        if (args.walletId) b.where('walletId', args.walletId.toLowerCase());
      });
    const { rows, total } = await fetchPage<OrderModel>(q, args, NEWEST_FIRST);
    return toPage(await this.shapes.orders(rows), total, args);
  }

  async fills(organizationId: string, orderId: string, page: PageWindow): Promise<PageResult<Fill>> {
    const order = await this.row(organizationId, Ids.uuid('Order', orderId));
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
  async walletTrades(organizationId: string, walletId: string, page: PageWindow): Promise<PageResult<Trade>> {
    const notFound = new KeelError('NOT_FOUND', 'Wallet not found');
    if (!Ids.isUuid(walletId)) throw notFound;
    const id = walletId.toLowerCase();
    const placed = await OrderModel.query(this.db).where({ organizationId, walletId: id }).select('id').first();
    if (!placed) throw notFound;
    const q = TradeModel.query(this.db).where((b) => b.where('makerWalletId', id).orWhere('takerWalletId', id));
    const { rows, total } = await fetchPage<TradeModel>(q, page, NEWEST_FIRST);
    return toPage(await this.shapes.trades(rows), total, page);
  }

  /** The market's public tape: every organisation's trades, without their orders, wallets or fees. */
  async marketTrades(symbol: string, page: PageWindow): Promise<PageResult<MarketTrade>> {
    const market = await this.markets.row(symbol);
    const q = TradeModel.query(this.db).where({ marketId: market.id });
    const { rows, total } = await fetchPage<TradeModel>(q, page, [{ column: 'sequence', order: 'desc' }]);
    return toPage(await this.shapes.marketTrades(rows), total, page);
  }

  /** Depth from the market's engine, read in turn with the market's commands (so it is committed state); on a node that does not lead the market, from PostgreSQL. */
  async book(symbol: string, levels: number): Promise<OrderBook> {
    const market = await this.markets.row(symbol);
    const led = await this.runtimes.serial(market.id, async () => {
      const rt = await this.runtimes.leading(market.id);
      if (!rt) return undefined;
      const depth = rt.engine.depth(levels);
      const level = (l: { price: number; quantity: number; orders: number }): BookLevel => ({
        price: formatMultiple(rt.rules.tick, BigInt(l.price)),
        quantity: formatMultiple(rt.rules.lot, BigInt(l.quantity)),
        orders: l.orders,
      });
      return { market: rt.rules.market.symbol, sequence: String(rt.engine.sequence), bids: depth.bids.map(level), asks: depth.asks.map(level) };
    });
    return { ...(led ?? (await this.committedBook(market.id, { levels, sequence: 'market' }))), timestamp: new Date() };
  }

  /** The organisation's orders of these ids (others are left out). */
  async rowsByIds(organizationId: string, ids: string[]): Promise<OrderModel[]> {
    return await OrderModel.query(this.db).where({ organizationId }).whereIn('id', ids);
  }

  /** Order rows as the API shows them. */
  views(rows: OrderModel[]): Promise<Order[]> {
    return this.shapes.orders(rows);
  }

  /**
   * The market's book as PostgreSQL holds it, its best `levels` a side (all without), with a sequence
   * read in the same statement: its book sequence (migration 021; the levels are exactly those after
   * book message `sequence`), or the market's command sequence (what the engine's depth carries).
   * Any node can read it, leader or not.
   */
  async committedBook(marketId: string, at: { levels?: number; sequence: 'book' | 'market' } = { sequence: 'book' }): Promise<{ market: string; sequence: string; bids: BookLevel[]; asks: BookLevel[] }> {
    const rules = await this.runtimes.rules(marketId);
    const side = (name: 'BUY' | 'SELL') =>
      `SELECT '${name}'::text AS side, price_ticks, sum(remaining_lots) AS lots, count(id)::int AS orders FROM orders
        WHERE market_id = :marketId AND status = ANY(:live) AND side = '${name}' GROUP BY price_ticks ORDER BY price_ticks ${name === 'BUY' ? 'DESC' : 'ASC'} LIMIT :levels`;
    const { rows } = await this.db.raw(
      `SELECT s.sequence::text AS "sequence", l.side, l.price_ticks::text AS "ticks", l.lots::text AS "lots", l.orders
         FROM (SELECT coalesce((SELECT sequence FROM ${at.sequence === 'book' ? 'market_book_sequences WHERE market_id' : 'markets WHERE id'} = :marketId), 0) AS sequence) s
         LEFT JOIN ((${side('BUY')}) UNION ALL (${side('SELL')})) l ON true`,
      { marketId, live: [...LIVE_STATUSES], levels: at.levels ?? null },
    );
    const found = (rows as { sequence: string; side: string | null; ticks: string | null; lots: string; orders: number }[]).filter((r) => r.side !== null && r.ticks !== null);
    const level = (r: { ticks: string | null; lots: string; orders: number }): BookLevel => ({ price: formatMultiple(rules.tick, BigInt(r.ticks!)), quantity: formatMultiple(rules.lot, BigInt(r.lots)), orders: r.orders });
    const ordered = (s: string, dir: 1 | -1) =>
      found
        .filter((r) => r.side === s)
        .sort((a, b) => dir * (Number(a.ticks) - Number(b.ticks)))
        .map(level);
    return { market: rules.market.symbol, sequence: String(rows[0]?.sequence ?? '0'), bids: ordered('BUY', -1), asks: ordered('SELL', 1) };
  }

  /** Best bid and ask of the committed open orders, as decimal strings. */
  async committedTouch(marketId: string): Promise<{ bestBid: string | null; bestAsk: string | null }> {
    const { rows } = await this.db.raw(
      `SELECT (SELECT max(price) FROM orders WHERE market_id = ? AND status = ANY(?) AND side = 'BUY')::text AS "bestBid",
              (SELECT min(price) FROM orders WHERE market_id = ? AND status = ANY(?) AND side = 'SELL')::text AS "bestAsk"`,
      [marketId, [...LIVE_STATUSES], marketId, [...LIVE_STATUSES]],
    );
    const r = rows[0] as { bestBid: string | null; bestAsk: string | null };
    return { bestBid: r.bestBid === null ? null : normalizeDecimal(r.bestBid), bestAsk: r.bestAsk === null ? null : normalizeDecimal(r.bestAsk) };
  }

  /** Best bid and ask as decimal strings: from the engine on the market's leader, from PostgreSQL elsewhere. */
  async touch(marketId: string): Promise<{ bestBid: string | null; bestAsk: string | null }> {
    const led = await this.runtimes.serial(marketId, async () => {
      const rt = await this.runtimes.leading(marketId);
      if (!rt) return undefined;
      const bid = rt.engine.bestBid();
      const ask = rt.engine.bestAsk();
      return { bestBid: bid === null ? null : formatMultiple(rt.rules.tick, BigInt(bid)), bestAsk: ask === null ? null : formatMultiple(rt.rules.tick, BigInt(ask)) };
    });
    return led ?? this.committedTouch(marketId);
  }
}
