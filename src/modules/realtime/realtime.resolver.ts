import { Arg, Authorized, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import type { Candle, Ticker } from '../market-data';
import { CandleType, TickerType } from '../market-data/market-data.types';
import type { Fill, MarketTrade, Order } from '../orders';
import { FillType, MarketTradeType, OrderObject } from '../orders/order.types';
import type { WalletBalance } from '../ledger';
import { LedgerBalanceType } from '../ledger/ledger.types';
import type { BookMessage } from './book-feed';
import { BookMessageType } from './realtime.types';
import type { RealtimeServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type RealtimeResolverServices = Pick<RealtimeServices, 'realtime'>;
type Context = GraphQLContext<RealtimeResolverServices>;

type Subscribe = SubscribeResolverData<unknown, Record<string, string>, Context>;
/** The resubscribe rule of the private channels (docs/trading-and-realtime.md, "Private feeds and the resubscribe rule"). */
const RESUBSCRIBE = '. If this node cannot deliver one of them, the subscription ends with an error (SERVICE_UNAVAILABLE, details.channel): subscribe again, then read the current state with the queries';
const realtime = (ctx: Context) => ({ service: ctx.services.realtime, access: ctx.principal });

/** Realtime feeds over graphql-ws at /graphql on the pro host (see docs/trading-and-realtime.md, "Realtime feeds"). */
@Resolver()
export class RealtimeResolver {
  @Authorized('orderbook_market:read')
  @Subscription(() => BookMessageType, {
    description: 'Channel book:<SYMBOL>. The whole book (SNAPSHOT), then the changed levels of every book change (UPDATE), in book-sequence order',
    subscribe: ({ args, context }: Subscribe) => realtime(context).service.book(realtime(context).access, args.symbol),
  })
  orderBook(@Root() message: BookMessage, @Arg('symbol') _symbol: string): BookMessage {
    return message;
  }

  @Authorized('orderbook_market:read')
  @Subscription(() => MarketTradeType, {
    description: "Channel trades:<SYMBOL>. The market's trades as they are committed, as its public tape shows them (no orders, wallets or fees)",
    subscribe: ({ args, context }: Subscribe) => realtime(context).service.trades(realtime(context).access, args.symbol),
  })
  trades(@Root() trade: MarketTrade, @Arg('symbol') _symbol: string): MarketTrade {
    return trade;
  }

  @Authorized('orderbook_market:read')
  @Subscription(() => TickerType, {
    description: 'Channel ticker:<SYMBOL>. The ticker now, then again after trades and changes of the book',
    subscribe: ({ args, context }: Subscribe) => realtime(context).service.ticker(realtime(context).access, args.symbol),
  })
  ticker(@Root() ticker: Ticker, @Arg('symbol') _symbol: string): Ticker {
    return ticker;
  }

  @Authorized('orderbook_market:read')
  @Subscription(() => CandleType, {
    description: "Channel candles:<SYMBOL>. The current interval's candle (none until the interval has a trade), then again after each trade (interval: 1m, 5m, 15m, 1h, 4h, 1d)",
    subscribe: ({ args, context }: Subscribe) => realtime(context).service.candles(realtime(context).access, args.symbol, args.interval),
  })
  candles(@Root() candle: Candle, @Arg('symbol') _symbol: string, @Arg('interval', { description: 'One of 1m, 5m, 15m, 1h, 4h, 1d' }) _interval: string): Candle {
    return candle;
  }

  @Authorized('orderbook_order:read')
  @Subscription(() => OrderObject, {
    description: `Channel orders. The caller's orders, in every state a commit leaves them in (never another organisation's)${RESUBSCRIBE}`,
    subscribe: ({ context }: Subscribe) => realtime(context).service.orders(realtime(context).access),
  })
  orders(@Root() order: Order): Order {
    return order;
  }

  @Authorized('orderbook_order:read')
  @Subscription(() => FillType, {
    description: `Channel fills. The caller's fills as they are committed${RESUBSCRIBE}`,
    subscribe: ({ context }: Subscribe) => realtime(context).service.fills(realtime(context).access),
  })
  fills(@Root() fill: Fill): Fill {
    return fill;
  }

  @Authorized('orderbook_order:read')
  @Subscription(() => LedgerBalanceType, {
    description: `Channel balances. The caller's wallets' trading balances, each time a commit moves one${RESUBSCRIBE}`,
    subscribe: ({ context }: Subscribe) => realtime(context).service.balances(realtime(context).access),
  })
  balances(@Root() balance: WalletBalance): WalletBalance {
    return balance;
  }
}
