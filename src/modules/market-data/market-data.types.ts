import { IsIn, Max, Min } from 'class-validator';
import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import { Decimal } from '../../graphql-kit/types/scalars';
import { Candle, CANDLE_INTERVALS, MAX_CANDLES, Ticker } from './market-data.service';

@ObjectType('Ticker')
export class TickerType implements Ticker {
  @Field() market!: string;
  @Field(() => Decimal, { nullable: true }) last!: string | null;
  @Field(() => Decimal, { nullable: true }) bestBid!: string | null;
  @Field(() => Decimal, { nullable: true }) bestAsk!: string | null;
  @Field(() => Decimal, { nullable: true, description: 'First trade price of the last 24 hours' }) open24h!: string | null;
  @Field(() => Decimal, { nullable: true }) high24h!: string | null;
  @Field(() => Decimal, { nullable: true }) low24h!: string | null;
  @Field(() => Decimal, { description: 'Base volume of the last 24 hours' }) volume24h!: string;
  @Field(() => Decimal, { description: 'Quote volume of the last 24 hours' }) quoteVolume24h!: string;
  @Field(() => Decimal, { nullable: true, description: 'last − open24h' }) change24h!: string | null;
  @Field(() => Decimal, { nullable: true, description: '(last − open24h) / open24h × 100, 4 decimals' }) changePercent24h!: string | null;
  @Field(() => Int) trades24h!: number;
  @Field() timestamp!: Date;
}

@ObjectType('Candle')
export class CandleType implements Candle {
  @Field({ description: 'Start of the interval' }) time!: Date;
  @Field(() => Decimal) open!: string;
  @Field(() => Decimal) high!: string;
  @Field(() => Decimal) low!: string;
  @Field(() => Decimal) close!: string;
  @Field(() => Decimal) volume!: string;
}

@ArgsType()
export class CandleArgs {
  @Field() symbol!: string;
  @Field({ description: 'One of 1m, 5m, 15m, 1h, 4h, 1d' }) @IsIn(Object.keys(CANDLE_INTERVALS)) interval!: string;
  @Field(() => Int, { defaultValue: 100, description: 'How many intervals back from now, 1..500' })
  @Min(1)
  @Max(MAX_CANDLES)
  count: number = 100;
}
