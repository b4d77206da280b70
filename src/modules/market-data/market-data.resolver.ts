import { Args, Arg, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import type { Candle, Ticker } from './market-data.service';
import { CandleArgs, CandleType, TickerType } from './market-data.types';
import type { MarketDataServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type MarketDataResolverServices = Pick<MarketDataServices, 'marketData'>;
type Context = GraphQLContext<MarketDataResolverServices>;

@Resolver()
export class MarketDataResolver {
  @Authorized('orderbook_market:read')
  @Query(() => TickerType, { description: 'Last price, touch and 24-hour statistics' })
  ticker(@Arg('symbol') symbol: string, @Ctx() ctx: Context): Promise<Ticker> {
    return ctx.services.marketData.ticker(symbol);
  }

  @Authorized('orderbook_market:read')
  @Query(() => [CandleType], { description: 'OHLCV candles, oldest first; intervals without trades are left out' })
  candles(@Args() args: CandleArgs, @Ctx() ctx: Context): Promise<Candle[]> {
    return ctx.services.marketData.candles(args.symbol, args.interval, args.count);
  }
}
