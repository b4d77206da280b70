import { IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { Decimal } from '../../graphql-kit/types/scalars';

import { BookLevel, Fill, Liquidity, MarketTrade, Order, OrderBook, OrderSide, OrderStatus, OrderType, PlaceOrderInput, ReplaceOrderInput, SettlementStatus, TimeInForce, Trade } from './order.domain';

registerEnumType(OrderSide, { name: 'OrderSide' });
registerEnumType(OrderType, { name: 'OrderType', description: 'LIMIT: at price or better. MARKET: whatever the book offers now; never rests.' });
registerEnumType(TimeInForce, {
  name: 'TimeInForce',
  description: 'GTC: rest until filled or cancelled. IOC: fill what is possible now, expire the rest. FOK: fill completely now or expire untouched.',
});
registerEnumType(OrderStatus, {
  name: 'OrderStatus',
  description:
    'OPEN: resting, nothing filled. PARTIALLY_FILLED: resting, some filled. FILLED: nothing left. CANCELLED: the rest was cancelled (by the owner, or by self-trade prevention). EXPIRED: the rest ended by time in force (IOC, FOK, MARKET). REJECTED: refused by the engine (post-only would take).',
});
registerEnumType(Liquidity, { name: 'Liquidity' });
registerEnumType(SettlementStatus, { name: 'SettlementStatus' });

@ObjectType('Order')
export class OrderObject implements Order {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) clientOrderId!: string | null;
  @Field(() => ID) marketId!: string;
  @Field({ description: 'The market symbol' }) market!: string;
  @Field(() => ID) walletId!: string;
  @Field(() => OrderSide) side!: OrderSide;
  @Field(() => OrderType) type!: OrderType;
  @Field(() => TimeInForce) timeInForce!: TimeInForce;
  @Field() postOnly!: boolean;
  @Field(() => Decimal, { nullable: true, description: 'Limit price; null for MARKET' }) price!: string | null;
  @Field(() => Decimal) quantity!: string;
  @Field(() => Decimal) filledQuantity!: string;
  @Field(() => Decimal, { description: 'quantity − filledQuantity' }) remainingQuantity!: string;
  @Field(() => Decimal, { nullable: true, description: 'Volume-weighted price of the fills' }) averagePrice!: string | null;
  @Field(() => Decimal, { description: 'Fees paid, in the quote asset' }) fee!: string;
  @Field(() => OrderStatus) status!: OrderStatus;
  @Field(() => String, { nullable: true, description: 'Why the order ended: USER, SELF_TRADE, IOC_REMAINDER, NO_LIQUIDITY, FOK_NOT_FILLABLE, POST_ONLY_WOULD_TAKE' })
  statusReason!: string | null;
  @Field({ description: 'Market sequence of the event that accepted (or rejected) the order' }) sequence!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('OrderPage')
export class OrderPage extends Page(OrderObject) {}

@ArgsType()
export class OrderListArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: 'Market symbol' }) @IsOptional() market?: string;
  @Field(() => OrderStatus, { nullable: true }) @IsOptional() status?: OrderStatus;
  @Field(() => ID, { nullable: true }) @IsOptional() walletId?: string;
}

@InputType('PlaceOrderInput')
export class PlaceOrderInputType implements PlaceOrderInput {
  @Field(() => ID, { description: 'A master wallet or deposit address of the organisation; its ledger balance funds the order' }) walletId!: string;
  @Field({ description: 'Market symbol, e.g. ETH-USDC' }) market!: string;
  @Field(() => OrderSide) side!: OrderSide;
  @Field(() => OrderType, { nullable: true, description: 'Default LIMIT' }) @IsOptional() type?: OrderType;
  @Field(() => Decimal, { nullable: true, description: 'Required for LIMIT (a multiple of tickSize); absent for MARKET' }) @IsOptional() price?: string;
  @Field(() => Decimal, { description: 'In the base asset; a multiple of lotSize' }) quantity!: string;
  @Field(() => TimeInForce, { nullable: true, description: 'Default GTC' }) @IsOptional() timeInForce?: TimeInForce;
  @Field(() => Boolean, { nullable: true, description: 'Reject instead of taking liquidity; LIMIT only' }) @IsOptional() postOnly?: boolean;
  @Field(() => String, { nullable: true, description: 'Your own id; unique per organisation' }) @IsOptional() @Length(1, 64) clientOrderId?: string;
}

@InputType('ReplaceOrderInput', { description: "The replacement of a live order; what is not given is the old order's (quantity: its unfilled rest as the replace is applied)" })
export class ReplaceOrderInputType implements ReplaceOrderInput {
  @Field(() => Decimal, { nullable: true, description: 'New limit price (a multiple of tickSize)' }) @IsOptional() price?: string;
  @Field(() => Decimal, { nullable: true, description: 'New quantity in the base asset (a multiple of lotSize)' }) @IsOptional() quantity?: string;
  @Field(() => TimeInForce, { nullable: true }) @IsOptional() timeInForce?: TimeInForce;
  @Field(() => Boolean, { nullable: true, description: 'Reject instead of taking liquidity' }) @IsOptional() postOnly?: boolean;
  @Field(() => String, { nullable: true, description: "The new order's own id; unique per organisation (the old order keeps its own)" }) @IsOptional() @Length(1, 64) clientOrderId?: string;
}

@ObjectType('MarketTrade', { description: "A trade on the market's public tape: no orders, wallets or fees (those are in Trade, for the wallet's trade history)" })
export class MarketTradeType implements MarketTrade {
  @Field(() => ID) id!: string;
  @Field(() => ID) marketId!: string;
  @Field() market!: string;
  @Field({ description: 'Market event sequence, as a string' }) sequence!: string;
  @Field(() => OrderSide) takerSide!: OrderSide;
  @Field(() => Decimal) price!: string;
  @Field(() => Decimal) quantity!: string;
  @Field(() => ID, { nullable: true }) settlementBatchId!: string | null;
  @Field(() => SettlementStatus) settlementStatus!: SettlementStatus;
  @Field() createdAt!: Date;
}

@ObjectType('MarketTradePage')
export class MarketTradePage extends Page(MarketTradeType) {}

@ObjectType('Trade', { description: "A trade with its orders, wallets and fees: a wallet's trade history, to an organisation that has placed an order with the wallet" })
export class TradeType extends MarketTradeType implements Trade {
  @Field(() => ID) makerOrderId!: string;
  @Field(() => ID) takerOrderId!: string;
  @Field(() => ID) makerWalletId!: string;
  @Field(() => ID) takerWalletId!: string;
  @Field(() => Decimal, { description: 'In the quote asset' }) makerFee!: string;
  @Field(() => Decimal, { description: 'In the quote asset' }) takerFee!: string;
}

@ObjectType('TradePage')
export class TradePage extends Page(TradeType) {}

@ObjectType('Fill', { description: "One trade seen from one order's side" })
export class FillType implements Fill {
  @Field(() => ID) id!: string;
  @Field(() => ID) tradeId!: string;
  @Field(() => ID) orderId!: string;
  @Field(() => ID) marketId!: string;
  @Field(() => OrderSide) side!: OrderSide;
  @Field(() => Liquidity) liquidity!: Liquidity;
  @Field(() => Decimal) price!: string;
  @Field(() => Decimal) quantity!: string;
  @Field(() => Decimal, { description: 'In the quote asset' }) fee!: string;
  @Field() sequence!: string;
  @Field() createdAt!: Date;
}

@ObjectType('FillPage')
export class FillPage extends Page(FillType) {}

@ObjectType('BookLevel')
export class BookLevelType implements BookLevel {
  @Field(() => Decimal) price!: string;
  @Field(() => Decimal) quantity!: string;
  @Field(() => Int) orders!: number;
}

@ObjectType('OrderBook')
export class OrderBookType implements OrderBook {
  @Field() market!: string;
  @Field({ description: 'Market sequence the book reflects' }) sequence!: string;
  @Field(() => [BookLevelType], { description: 'Best (highest) first' }) bids!: BookLevelType[];
  @Field(() => [BookLevelType], { description: 'Best (lowest) first' }) asks!: BookLevelType[];
  @Field() timestamp!: Date;
}

@ArgsType()
export class BookArgs {
  @Field() symbol!: string;
  @Field(() => Int, { defaultValue: 20, description: 'Price levels per side, 1..500' })
  @Min(1)
  @Max(500)
  levels: number = 20;
}
