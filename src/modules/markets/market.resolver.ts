import { Arg, Args, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { CreateMarketInput, MarketListArgs, MarketPage, MarketType, UpdateMarketInput } from './market.types';
import type { MarketsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type MarketResolverServices = Pick<MarketsServices, 'markets'>;
type Context = GraphQLContext<MarketResolverServices>;

@Resolver()
export class MarketResolver {
  @Authorized('orderbook_market:read')
  @Query(() => MarketPage, { description: 'Markets of this deployment, by symbol' })
  markets(@Args() args: MarketListArgs, @Ctx() ctx: Context): Promise<MarketPage> {
    return ctx.services.markets.list(args);
  }

  @Authorized('orderbook_market:read')
  @Query(() => MarketType)
  market(@Arg('symbol') symbol: string, @Ctx() ctx: Context): Promise<MarketType> {
    return ctx.services.markets.get(symbol);
  }

  @Authorized('orderbook_market:manage')
  @Mutation(() => MarketType, { description: "Opens a market for trading (the operator's key only); tickSize × lotSize must be a whole number of quote base units" })
  createMarket(@Arg('input') input: CreateMarketInput, @Ctx() ctx: Context): Promise<MarketType> {
    return ctx.services.markets.create(input);
  }

  @Authorized('orderbook_market:manage')
  @Mutation(() => MarketType, { description: "Changes fees, minimum notional or status (the operator's key only; HALTED refuses new orders)" })
  updateMarket(@Arg('symbol') symbol: string, @Arg('input') input: UpdateMarketInput, @Ctx() ctx: Context): Promise<MarketType> {
    return ctx.services.markets.update(symbol, input);
  }
}
