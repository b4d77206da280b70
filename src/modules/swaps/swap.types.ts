import { IsOptional, Length } from 'class-validator';
import { ArgsType, Field, ID, InputType, ObjectType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { AssetType } from '../chains/chain.types';
import type { SwapFeeView, SwapFilter, SwapGasView, SwapInput, SwapQuoteInput, SwapQuoteView, SwapRouteStepView, SwapView } from './swap.service';

const ORDER_DOC =
  'RECOMMENDED (default): the route with the highest expected output, minimum output = expected less slippageTolerance. ' +
  'CHEAPEST: the route with the least gas (fewest pools), then the highest output. ' +
  'FASTEST (the settlement-rule default): the RECOMMENDED route. ' +
  'Whatever the order, an approval (when one is needed) is for exactly what the swap and the wallet\'s swaps of the token still on their way will spend, never an unlimited allowance. ' +
  'NO_SLIPPAGE: the RECOMMENDED route with minimum output = the quoted output: it executes only if the pools have not moved against the quote at all.';

const SLIPPAGE_DOC = 'Percent the output may fall short of the quote, 0 to 50 (default "0.5"); ignored for NO_SLIPPAGE';

@ArgsType()
export class SwapQuoteArgs implements SwapQuoteInput {
  @Field({ description: 'The asset to sell' }) @Length(1, 64) fromAssetId!: string;
  @Field({ description: 'The asset to buy (same chain)' }) @Length(1, 64) toAssetId!: string;
  @Field({ description: 'Whole units of fromAsset to sell, e.g. "100.5"' }) @Length(1, 80) amount!: string;
  @Field(() => String, { nullable: true, description: ORDER_DOC }) @IsOptional() @Length(1, 20) order?: string | null;
  @Field(() => String, { nullable: true, description: SLIPPAGE_DOC }) @IsOptional() @Length(1, 10) slippageTolerance?: string | null;
}

@InputType('SwapInput')
export class SwapInputType implements SwapInput {
  @Field(() => String, { nullable: true, description: 'Swap from the master wallet address (give this or addressId)' }) @IsOptional() @Length(1, 64) masterWalletId?: string | null;
  @Field(() => String, { nullable: true, description: 'Swap from a deposit address (give this or masterWalletId)' }) @IsOptional() @Length(1, 64) addressId?: string | null;
  @Field({ description: 'The asset to sell' }) @Length(1, 64) fromAssetId!: string;
  @Field({ description: 'The asset to buy (same chain)' }) @Length(1, 64) toAssetId!: string;
  @Field({ description: 'Whole units of fromAsset to sell' }) @Length(1, 80) amount!: string;
  @Field(() => String, { nullable: true, description: 'Receives the output; the sending address when absent. Must pass security.allowedRecipients and the destination screen' })
  @IsOptional()
  @Length(1, 100)
  recipient?: string | null;
  @Field(() => String, { nullable: true, description: ORDER_DOC }) @IsOptional() @Length(1, 20) order?: string | null;
  @Field(() => String, { nullable: true, description: SLIPPAGE_DOC }) @IsOptional() @Length(1, 10) slippageTolerance?: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "The floor the caller saw in a quote, whole units of toAsset: refused (422 naming minimumOutput) when the pools give less now; otherwise the router is given the stricter of it and the slippage tolerance's minimum and reverts rather than deliver less",
  })
  @IsOptional()
  @Length(1, 80)
  minimumOutput?: string | null;
  @Field(() => String, { nullable: true, description: 'Percent, 0 to 100: the largest price impact this swap accepts. Default SWAP_MAX_PRICE_IMPACT_PERCENT (3); a swap above the cap is refused (422 naming maxPriceImpact)' })
  @IsOptional()
  @Length(1, 10)
  maxPriceImpact?: string | null;
}

@ObjectType('SwapRouteStep')
export class SwapRouteStepType implements SwapRouteStepView {
  @Field(() => ID) assetId!: string;
  @Field() symbol!: string;
  @Field({ description: 'The token the router is given (WETH for the native coin)' }) tokenAddress!: string;
}

@ObjectType('SwapFee')
export class SwapFeeType implements SwapFeeView {
  @Field({ description: "The pools' fees (0.3% per pool), in whole units of the sold asset" }) amount!: string;
  @Field(() => AssetType) asset!: AssetType;
  @Field({ description: 'The same as a percentage of the amount' }) percent!: string;
}

@ObjectType('SwapGas')
export class SwapGasType implements SwapGasView {
  @Field({ description: 'Gas limit of the swap transaction' }) limit!: string;
  @Field({ description: 'Gas limit of the approval transaction a token swap needs when the router may not yet spend the token; 0 for the native coin' })
  approvalLimit!: string;
  @Field({ description: 'Most both may cost at the current max fee per gas, in whole native coins' }) fee!: string;
}

@ObjectType('SwapQuote', { description: 'What a swap would give now: read from the DEX router and pools, nothing is reserved' })
export class SwapQuoteType implements SwapQuoteView {
  @Field(() => ID) blockchainId!: string;
  @Field({ description: 'The Uniswap V2 router the swap goes through' }) router!: string;
  @Field(() => AssetType) fromAsset!: AssetType;
  @Field(() => AssetType) toAsset!: AssetType;
  @Field() amount!: string;
  @Field({ description: 'What the route gives at the pools\' current reserves, in whole units of toAsset' }) expectedOutput!: string;
  @Field({ description: 'The least a swap made now would accept: the router reverts rather than deliver less' }) minimumOutput!: string;
  @Field({ description: "Percent by which the output falls short of the pools' current price (after fees) because of the trade's size" }) priceImpact!: string;
  @Field(() => [SwapRouteStepType]) route!: SwapRouteStepType[];
  @Field(() => SwapFeeType) fee!: SwapFeeType;
  @Field(() => SwapGasType) gas!: SwapGasType;
  @Field() order!: string;
  @Field({ description: 'Percent' }) slippageTolerance!: string;
  @Field() quotedAt!: Date;
}

@ObjectType('Swap', { description: 'A swap on the chain\'s DEX from a wallet address: its transactions are the lines of transfer transferId' })
export class SwapType implements SwapView {
  @Field(() => ID) id!: string;
  @Field({ description: 'PENDING_APPROVAL, QUEUED, SUBMITTED, EXECUTED (mined and confirmed; outputAmount set), FAILED (refused by the chain or reverted, e.g. below minimumOutput: nothing swapped, at most gas spent), REJECTED' })
  status!: string;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => ID, { nullable: true }) addressId!: string | null;
  @Field(() => ID) blockchainId!: string;
  @Field() fromAddress!: string;
  @Field() recipient!: string;
  @Field(() => AssetType) fromAsset!: AssetType;
  @Field(() => AssetType) toAsset!: AssetType;
  @Field({ description: 'Whole units of fromAsset sold' }) amount!: string;
  @Field() expectedOutput!: string;
  @Field({ description: 'Enforced on chain' }) minimumOutput!: string;
  @Field(() => String, { nullable: true, description: 'What the recipient received, once executed' }) outputAmount!: string | null;
  @Field() priceImpact!: string;
  @Field(() => [String], { description: 'Symbols of the assets along the route' }) route!: string[];
  @Field() order!: string;
  @Field() slippageTolerance!: string;
  @Field(() => ID) transferId!: string;
  @Field(() => String, { nullable: true }) txHash!: string | null;
  @Field(() => String, { nullable: true, description: 'Gas the swap transaction paid, in the native coin' }) gasFee!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('SwapPage')
export class SwapPage extends Page(SwapType) {}

@ArgsType()
export class SwapFilterArgs extends PageArgs implements SwapFilter {
  @Field(() => String, { nullable: true }) @IsOptional() status?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() masterWalletId?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() addressId?: string | null;
}
