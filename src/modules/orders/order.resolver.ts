import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { PageArgs } from '../../graphql-kit/types/page';
import type { PageResult } from '../../platform/paging';
import type { Fill, MarketTrade, Order, OrderBook, Trade } from './order.domain';
import {
  BookArgs,
  FillPage,
  MarketTradePage,
  OrderBookType,
  OrderListArgs,
  OrderPage,
  OrderObject,
  PlaceOrderInputType,
  ReplaceOrderInputType,
  TradePage,
} from './order.types';
import type { OrdersServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type OrderResolverServices = Pick<OrdersServices, 'orderQueries' | 'orders'>;
type Context = GraphQLContext<OrderResolverServices>;

@Resolver()
export class OrderResolver {
  @Authorized('orderbook_order:create')
  @Mutation(() => OrderObject, { description: "Places an order; its effects are committed before the answer. Refused with MARKET_HALTED on a halted market, TRADING_EXIT_REQUESTED once the wallet has asked to exit the chain's settlement contract" })
  placeOrder(@Arg('input') input: PlaceOrderInputType, @Ctx() ctx: Context): Promise<Order> {
    return ctx.services.orders.place(ctx.principal.organizationId, input);
  }

  @Authorized('orderbook_order:cancel')
  @Mutation(() => OrderObject, { description: 'Cancels the unfilled rest of an OPEN or PARTIALLY_FILLED order and releases its lock' })
  cancelOrder(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Order> {
    return ctx.services.orders.cancel(ctx.principal.organizationId, id);
  }

  @Authorized('orderbook_order:cancel', 'orderbook_order:create')
  @Mutation(() => OrderObject, {
    description: 'Cancel-replace (amend): cancels an OPEN or PARTIALLY_FILLED order and places its replacement (same wallet, market, side) in one commit, or does neither; the replacement queues behind the orders at its price',
  })
  replaceOrder(@Arg('id', () => ID) id: string, @Arg('input') input: ReplaceOrderInputType, @Ctx() ctx: Context): Promise<Order> {
    return ctx.services.orders.replace(ctx.principal.organizationId, id, input);
  }

  @Authorized('orderbook_order:read')
  @Query(() => OrderPage, { description: "The organisation's orders, newest first" })
  orders(@Args() args: OrderListArgs, @Ctx() ctx: Context): Promise<PageResult<Order>> {
    return ctx.services.orderQueries.list(ctx.principal.organizationId, args);
  }

  @Authorized('orderbook_order:read')
  @Query(() => OrderObject)
  order(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Order> {
    return ctx.services.orderQueries.get(ctx.principal.organizationId, id);
  }

  @Authorized('orderbook_order:read')
  @Query(() => FillPage, { description: "An order's fills, oldest first" })
  orderFills(@Arg('id', () => ID) id: string, @Args() page: PageArgs, @Ctx() ctx: Context): Promise<PageResult<Fill>> {
    return ctx.services.orderQueries.fills(ctx.principal.organizationId, id, page);
  }

  @Authorized('orderbook_order:read')
  @Query(() => TradePage, { description: "A wallet's trades, newest first; 404 unless this organisation has placed an order with the wallet" })
  walletTrades(@Arg('walletId', () => ID) walletId: string, @Args() page: PageArgs, @Ctx() ctx: Context): Promise<PageResult<Trade>> {
    return ctx.services.orderQueries.walletTrades(ctx.principal.organizationId, walletId, page);
  }

  @Authorized('orderbook_market:read')
  @Query(() => OrderBookType, { description: 'Aggregated depth per price level' })
  orderBook(@Args() args: BookArgs, @Ctx() ctx: Context): Promise<OrderBook> {
    return ctx.services.orderQueries.book(args.symbol, args.levels);
  }

  @Authorized('orderbook_market:read')
  @Query(() => MarketTradePage, { description: "A market's trades, newest first: its public tape, every organisation's trades without their orders, wallets or fees" })
  marketTrades(@Arg('symbol') symbol: string, @Args() page: PageArgs, @Ctx() ctx: Context): Promise<PageResult<MarketTrade>> {
    return ctx.services.orderQueries.marketTrades(symbol, page);
  }
}
