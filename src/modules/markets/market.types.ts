import { IsOptional, Matches } from 'class-validator';
import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { Decimal } from '../../graphql-kit/types/scalars';
import { MARKET_SYMBOL, MARKET_SYMBOL_RULE, MarketStatus } from './market.domain';
import type { CreateMarket, MarketFilter, MarketView, UpdateMarket } from './market.service';

export { MarketStatus };

registerEnumType(MarketStatus, {
  name: 'MarketStatus',
  description: 'ACTIVE: accepts orders. HALTED: refuses new orders (MARKET_HALTED); cancels still work.',
});

@ObjectType('Market', { description: 'A trading pair of this deployment: the same for every organisation' })
export class MarketType implements MarketView {
  @Field(() => ID) id!: string;
  @Field({ description: 'BASE-QUOTE, e.g. ETH-USDC' }) symbol!: string;
  @Field(() => ID) baseAssetId!: string;
  @Field(() => ID) quoteAssetId!: string;
  @Field() baseSymbol!: string;
  @Field() quoteSymbol!: string;
  @Field(() => ID, { description: 'The chain both assets live on' }) blockchainId!: string;
  @Field(() => Decimal, { description: 'Price increment, in quote per one base' }) tickSize!: string;
  @Field(() => Decimal, { description: 'Quantity increment, in base' }) lotSize!: string;
  @Field(() => Decimal, { description: 'Smallest price × quantity of a LIMIT order, in quote' }) minNotional!: string;
  @Field(() => Decimal, { description: 'Fee rate charged to the resting side of a trade, e.g. "0.001"' }) makerFee!: string;
  @Field(() => Decimal, { description: 'Fee rate charged to the incoming side of a trade' }) takerFee!: string;
  @Field(() => MarketStatus) status!: MarketStatus;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('MarketPage')
export class MarketPage extends Page(MarketType) {}

@ArgsType()
export class MarketListArgs extends PageArgs implements MarketFilter {
  @Field(() => MarketStatus, { nullable: true }) @IsOptional() status?: MarketStatus;
}

@InputType('CreateMarketInput')
export class CreateMarketInput implements CreateMarket {
  @Field({ description: 'BASE-QUOTE in capitals and digits, e.g. ETH-USDC' })
  @Matches(MARKET_SYMBOL, { message: MARKET_SYMBOL_RULE })
  symbol!: string;
  @Field(() => ID) baseAssetId!: string;
  @Field(() => ID) quoteAssetId!: string;
  @Field(() => Decimal) tickSize!: string;
  @Field(() => Decimal) lotSize!: string;
  @Field(() => Decimal, { nullable: true, description: 'Default "0"' }) @IsOptional() minNotional?: string;
  @Field(() => Decimal, { nullable: true, description: 'Default "0"; at most "0.1", a whole number of millionths' }) @IsOptional() makerFee?: string;
  @Field(() => Decimal, { nullable: true, description: 'Default "0"; at most "0.1", a whole number of millionths' }) @IsOptional() takerFee?: string;
  @Field(() => MarketStatus, { nullable: true, description: 'Default ACTIVE' }) @IsOptional() status?: MarketStatus;
}

@InputType('UpdateMarketInput', { description: 'Tick and lot size are fixed once a market exists' })
export class UpdateMarketInput implements UpdateMarket {
  @Field(() => Decimal, { nullable: true }) @IsOptional() minNotional?: string;
  @Field(() => Decimal, { nullable: true }) @IsOptional() makerFee?: string;
  @Field(() => Decimal, { nullable: true }) @IsOptional() takerFee?: string;
  @Field(() => MarketStatus, { nullable: true }) @IsOptional() status?: MarketStatus;
}
