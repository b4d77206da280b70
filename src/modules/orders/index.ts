/**
 * The orders module's face: what other modules may use of it. The order book: placement and cancellation through one engine per market, its reads, and shard leadership.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { OrderQueries } from './order-queries';
import type { OrderService } from './order.service';
import type { ShardLeadership } from './shard-leadership';

export type { CommittedChange, OrderChange } from './committed-change';
export { OrderQueries } from './order-queries';
export { marketTradeView } from './order-views';
export { Liquidity, OrderSide, OrderStatus, SettlementStatus } from './order.domain';
export type { BookLevel, Fill, MarketTrade, Order, Trade } from './order.domain';
export type { OrderModel } from './order.model';
export { OrderService } from './order.service';
export type { MarketEngineView } from './order.service';
export { ShardLeadership } from './shard-leadership';
export { tradeCandles, tradeDay } from './trade-aggregates';
export { tradeRows } from './trade-queries';
export { batchFactsOf, batchHoldsTrades, batchTradeIds, batchTradeRows, batchTrades, queuedTrades, setBatchTradesStatus, settlementTradeRows, unconfirmedTradeRows } from './trade-settlement-rows';
export type { HeldShard, ShardLeader } from './shard-leadership';
export type { WalletExit, WalletExits } from './wallet-exits';

export { createOrdersServices } from './orders-services';

/** The orders module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface OrdersServices {
  orders: OrderService;
  /** Which order-book shards this node leads (leases in Redis, fencing tokens in PostgreSQL); the orderbook role starts it. */
  shardLeadership: ShardLeadership;
  orderQueries: OrderQueries;
}
