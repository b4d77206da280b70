import { ArrayMaxSize, ArrayMinSize, IsIn, IsOptional, Length, Max, Min, ValidateNested } from 'class-validator';
import { ArgsType, Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { IsIdFilter } from '../../graphql/types/id';
import { AssetType, BlockchainType } from '../chains/chain.types';
import { Page, PageArgs } from '../../graphql/types/page';
import { DateRangeArgs } from '../../graphql/types/date-range';
import { PAGE_LIMIT } from '../../platform/paging';

@ObjectType({ description: 'The token side of a transfer, exact' })
export class RawContractType {
  @Field({ description: 'The amount in the smallest unit, as a decimal string' }) value!: string;
  @Field({ description: 'The token contract; the zero address for the native coin' }) address!: string;
  @Field({ description: "The asset's decimals, as a decimal string" }) decimal!: string;
}

@ObjectType({ description: 'Value that moved on chain to or from a wallet, seen from that wallet' })
export class TransferRecordType {
  @Field(() => ID) id!: string;
  @Field({ description: 'external (native coin), erc20, or internal (between two wallets of the organisation)' }) category!: string;
  @Field({ description: 'incoming or outgoing' }) direction!: string;
  @Field({ description: 'CONFIRMED, or REVERTED when a reorg took its block off the chain' }) status!: string;
  @Field({ description: 'Block number, decimal' }) blockNum!: string;
  @Field() hash!: string;
  @Field(() => Int, { description: 'Position of the ERC-20 log in its block; -1 for a native transfer' }) logIndex!: number;
  @Field() from!: string;
  @Field() to!: string;
  @Field() symbol!: string;
  @Field(() => Float, { description: 'In whole units, for display; rawContract.value is exact' }) value!: number;
  @Field(() => AssetType) asset!: AssetType;
  @Field(() => RawContractType) rawContract!: RawContractType;
  @Field({ description: 'Block time, ISO 8601' }) timestamp!: string;
  @Field(() => ID) blockchainId!: string;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => ID, { nullable: true, description: 'The deposit address; null for the master wallet address' }) addressId!: string | null;
}

@ObjectType()
export class CursorPageInfoType {
  @Field() hasMore!: boolean;
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last' }) nextCursor!: string | null;
}

@ObjectType({ description: "The spec's master wallet transfer list wrapper" })
export class TransferListType {
  @Field(() => [TransferRecordType]) transfer!: TransferRecordType[];
  @Field(() => CursorPageInfoType) pageInfo!: CursorPageInfoType;
  @Field(() => Int, { description: 'Records matching the filters, across all pages' }) totalCount!: number;
}

@ArgsType()
export class TransferListArgs extends DateRangeArgs {
  @Field(() => String, { nullable: true, description: 'incoming or outgoing; both when absent' }) @IsOptional() @IsIn(['incoming', 'outgoing']) direction?: 'incoming' | 'outgoing';
  @Field(() => String, { defaultValue: 'DESC', description: 'ASC (oldest first) or DESC (newest first), by block' }) @IsIn(['ASC', 'DESC']) sort: 'ASC' | 'DESC' = 'DESC';
  @Field(() => String, { nullable: true, description: 'pageInfo.nextCursor of the previous page' }) @IsOptional() cursor?: string;
  @Field(() => Int, { defaultValue: PAGE_LIMIT.default }) @Min(PAGE_LIMIT.min) @Max(PAGE_LIMIT.max) limit: number = PAGE_LIMIT.default;
  @Field(() => String, { nullable: true, description: 'Only this asset' }) @IsOptional() @IsIdFilter() assetId?: string;
  @Field(() => String, { nullable: true, description: 'Only this chain' }) @IsOptional() @IsIdFilter() blockchainId?: string;
  @Field(() => String, { nullable: true, description: 'CONFIRMED or REVERTED; both when absent' }) @IsOptional() @IsIn(['CONFIRMED', 'REVERTED']) status?: 'CONFIRMED' | 'REVERTED';
}

@InputType()
export class TransferLineInput {
  @Field() @Length(1, 64) assetId!: string;
  @Field({ description: 'EVM address; mixed case must carry a valid checksum' }) @Length(1, 100) recipient!: string;
  @Field({ description: 'Whole units, e.g. "12.5"' }) @Length(1, 80) amount!: string;
}

@InputType()
export class TransferInput {
  @Field(() => [TransferLineInput]) @ArrayMinSize(1) @ArrayMaxSize(50) @ValidateNested({ each: true }) assets!: TransferLineInput[];
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) note?: string;
}

@InputType()
export class EstimateGasInput {
  @Field(() => [TransferLineInput]) @ArrayMinSize(1) @ArrayMaxSize(50) @ValidateNested({ each: true }) assets!: TransferLineInput[];
}

@ObjectType()
export class TransferItemType {
  @Field(() => ID) id!: string;
  @Field(() => Int) position!: number;
  @Field(() => AssetType) asset!: AssetType;
  @Field() recipient!: string;
  @Field({ description: 'Whole units' }) amount!: string;
  @Field({ description: 'Smallest unit' }) rawAmount!: string;
  @Field({ description: 'PENDING_APPROVAL, QUEUED, SIGNED, SUBMITTED, CONFIRMED, FAILED, REJECTED' }) status!: string;
  @Field(() => String, { nullable: true, description: 'The hash of the transaction now in force' }) txHash!: string | null;
  @Field(() => [String], { description: 'Earlier transactions with the same nonce, replaced by fee bumps' }) replacedTxHashes!: string[];
  @Field(() => String, { nullable: true }) nonce!: string | null;
  @Field(() => String, { nullable: true }) blockNumber!: string | null;
  @Field(() => String, { nullable: true, description: 'Gas used × effective price, in the native coin' }) gasFee!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Date, { nullable: true }) submittedAt!: Date | null;
}

@ObjectType({ description: 'A withdrawal, sweep or gas top-up: lines sent from one wallet address on one chain' })
export class TransferType {
  @Field(() => ID) id!: string;
  @Field({ description: 'withdrawal, sweep or gas_topup' }) kind!: string;
  @Field({ description: 'PENDING_APPROVAL, QUEUED, SUBMITTED, CONFIRMED, FAILED (any line failed), REJECTED' }) status!: string;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => ID, { nullable: true }) addressId!: string | null;
  @Field(() => ID) blockchainId!: string;
  @Field() fromAddress!: string;
  @Field(() => String, { nullable: true }) note!: string | null;
  @Field(() => [TransferItemType]) items!: TransferItemType[];
  @Field(() => Date, { nullable: true, description: 'When it was approved or rejected' }) decidedAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType()
export class TransferPage extends Page(TransferType) {}

@ArgsType()
export class TransferFilterArgs extends PageArgs {
  @Field(() => String, { nullable: true }) @IsOptional() status?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() masterWalletId?: string;
}

@ObjectType()
export class GasEstimateLineType {
  @Field() amount!: string;
  @Field(() => AssetType) asset!: AssetType;
  @Field(() => BlockchainType) blockchain!: BlockchainType;
  @Field() destinationAddress!: string;
}

@ObjectType()
export class EstimatedFeeType {
  @Field({ description: 'Most the lines may cost, in whole native coins (gas limit × max fee per gas)' }) amount!: string;
  @Field({ description: 'The same in the smallest unit (wei)' }) value!: string;
  @Field({ description: 'Gas limit of all lines together' }) callGasLimit!: string;
  @Field({ description: "Spelled as the spec spells it. Always \"0\": Keel's wallets are plain accounts, with no account-abstraction verification step" })
  verificationGasLimi!: string;
}

@ObjectType()
export class GasEstimateType {
  @Field(() => [GasEstimateLineType]) assets!: GasEstimateLineType[];
  @Field(() => EstimatedFeeType) estimatedFee!: EstimatedFeeType;
}
