import { ArrayMaxSize, ArrayMinSize, MaxLength } from 'class-validator';
import { Field, InputType, Int, ObjectType } from 'type-graphql';
import type { SymbolPriceList, SymbolPriceView } from './price.service';

@ObjectType('TokenPrice', { description: 'USD price of a token by symbol' })
export class TokenPriceType implements SymbolPriceView {
  @Field({ description: 'The symbol, upper-cased' }) symbol!: string;
  @Field(() => String, { nullable: true, description: 'USD per whole unit, a decimal string; null when no price can be had (see unavailableReason): never invented' })
  price!: string | null;
  @Field(() => Date, { nullable: true, description: 'When the price was true: the trade time, or when a reference was read' }) lastUpdatedAt!: Date | null;
  @Field({ description: 'reference (PRICE_REFERENCES), par (a USD stablecoin), orderbook:<MARKET> (its last trade) or none' }) source!: string;
  @Field(() => String, { nullable: true, description: 'Why price is null' }) unavailableReason!: string | null;
}

@ObjectType('TokenPriceList')
export class TokenPriceListType implements SymbolPriceList {
  @Field(() => [TokenPriceType], { description: 'One per symbol asked, in order' }) data!: TokenPriceType[];
  @Field(() => Int) total!: number;
  @Field() hasMore!: boolean;
}

@InputType('TokenPricesInput')
export class TokenPricesInput {
  @Field(() => [String], { description: '1 to 100 token symbols (ETH, USDC, …), any case' })
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @MaxLength(32, { each: true })
  symbols!: string[];
}
