import { formatMultiple, formatScaled, normalizeDecimal, pow10 } from '../../platform/decimal';
import type { TradingRules } from '../markets';
import type { MarketRuntimes } from './market-runtime';
import { MarketTrade, Order, OrderSide, OrderStatus, OrderType, SettlementStatus, TimeInForce, Trade } from './order.domain';
import type { OrderModel, TradeModel } from './order.model';

/** What a trade is made of wherever it is read: a stored row (TradeModel) or a committed change (CommittedTrade). */
export type TradeFacts = Pick<Trade, 'id' | 'makerOrderId' | 'takerOrderId' | 'makerWalletId' | 'takerWalletId' | 'price' | 'quantity' | 'makerFee' | 'takerFee'> & MarketTradeFacts;
type MarketTradeFacts = Pick<Trade, 'id' | 'price' | 'quantity'> & {
  sequence: string | number;
  takerSide: string;
  settlementStatus: string | null;
  settlementBatchId?: string | null;
};

/**
 * The public tape's view of a trade, and its only mapper: stored trades (OrderViews.marketTrades) and
 * the realtime trade feed (a committed trade, not yet in a settlement batch: QUEUED) both go through it.
 * It leaves out whose orders and wallets traded and their fees.
 */
export function marketTradeView(t: MarketTradeFacts, market: { id: string; symbol: string }, createdAt: Date): MarketTrade {
  return {
    id: t.id,
    marketId: market.id,
    market: market.symbol,
    sequence: String(t.sequence),
    takerSide: t.takerSide as OrderSide,
    price: normalizeDecimal(t.price),
    quantity: normalizeDecimal(t.quantity),
    settlementBatchId: t.settlementBatchId ?? null,
    settlementStatus: (t.settlementStatus ?? SettlementStatus.QUEUED) as SettlementStatus,
    createdAt,
  };
}

/** The whole Trade view (orders, wallets, fees): for the wallet trade history only. */
function tradeView(t: TradeFacts, market: { id: string; symbol: string }, createdAt: Date): Trade {
  return {
    ...marketTradeView(t, market, createdAt),
    makerOrderId: t.makerOrderId,
    takerOrderId: t.takerOrderId,
    makerWalletId: t.makerWalletId,
    takerWalletId: t.takerWalletId,
    makerFee: normalizeDecimal(t.makerFee),
    takerFee: normalizeDecimal(t.takerFee),
  };
}

/** Order and trade records as the API shows them (decimal strings in the market's units). */
export class OrderViews {
  constructor(private readonly runtimes: MarketRuntimes) {}

  async orders(rows: OrderModel[]): Promise<Order[]> {
    const rules = await this.rulesOf(rows);
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
        filledQuantity: formatMultiple(r.lot, filled),
        remainingQuantity: formatMultiple(r.lot, total - filled),
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

  async trades(rows: TradeModel[]): Promise<Trade[]> {
    const rules = await this.rulesOf(rows);
    return rows.map((t) => tradeView(t, rules.get(t.marketId)!.market, t.createdAt));
  }

  async marketTrades(rows: TradeModel[]): Promise<MarketTrade[]> {
    const rules = await this.rulesOf(rows);
    return rows.map((t) => marketTradeView(t, rules.get(t.marketId)!.market, t.createdAt));
  }

  private async rulesOf(rows: { marketId: string }[]): Promise<Map<string, TradingRules>> {
    const rules = new Map<string, TradingRules>();
    for (const id of new Set(rows.map((r) => r.marketId))) rules.set(id, await this.runtimes.rules(id));
    return rules;
  }
}
