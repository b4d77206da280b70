import { IsIn, IsOptional, Max, Min } from 'class-validator';
import { ArgsType, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { DateRangeArgs } from '../../graphql-kit/types/date-range';
import { PAGE_LIMIT } from '../../platform/paging';
import { AssetType } from '../chains/chain.types';
import { TRANSFER_CATEGORIES, TransferCategory } from './chain-transfer.model';
import type { ChainTransferFilter, ChainTransferPage, ChainTransferView, SanctionListEntry } from './chain-transfer-history.service';
import type { NftHoldingView } from './nft-holdings.service';


@ObjectType({ description: 'The token side of a transfer, exact' })
export class RawContractType {
  @Field({ description: 'The amount in the smallest unit, as a decimal string' }) value!: string;
  @Field({ description: 'The token contract; the zero address for the native coin' }) address!: string;
  @Field({ description: "The asset's decimals, as a decimal string" }) decimal!: string;
}

@ObjectType('SanctionListEntry', { description: 'A sanctions list entry: the list and the address as it writes it' })
export class SanctionListEntryType implements SanctionListEntry {
  @Field({ description: 'ETH, ARB, BSC, USDT, USDC, XBT, TRX, …' }) list!: string;
  @Field() address!: string;
}

@ObjectType('TransferAmlFlag', { description: 'An incoming transfer whose sender is on a sanctions list: flagged, and its address held from auto-sweep' })
export class TransferAmlFlagType {
  @Field() flaggedAt!: Date;
  @Field(() => [SanctionListEntryType], { description: 'The list entries the sender matched' }) matches!: SanctionListEntryType[];
  @Field(() => Date, { nullable: true, description: 'When an admin released the hold; null while it holds' }) releasedAt!: Date | null;
}

@ObjectType({ description: 'Value that moved on chain to or from a wallet, seen from that wallet' })
export class TransferRecordType implements ChainTransferView {
  @Field(() => ID) id!: string;
  @Field({ description: 'external (native coin), erc20, erc721, erc1155, or internal (between two wallets of the organisation); specialnft is reserved and never recorded' }) category!: string;
  @Field({ description: 'incoming or outgoing' }) direction!: string;
  @Field({ description: 'CONFIRMED, or REVERTED when a reorg took its block off the chain' }) status!: string;
  @Field({ description: 'Block number, decimal' }) blockNum!: string;
  @Field() hash!: string;
  @Field(() => Int, { description: 'Position of the token log in its block; -1 for a native transfer' }) logIndex!: number;
  @Field() from!: string;
  @Field() to!: string;
  @Field() symbol!: string;
  @Field(() => Float, { description: 'In whole units, for display; rawContract.value is exact' }) value!: number;
  @Field(() => AssetType) asset!: AssetType;
  @Field(() => RawContractType) rawContract!: RawContractType;
  @Field(() => String, { nullable: true, description: 'An NFT transfer (erc721, erc1155): the token id, decimal; rawContract.value is how many tokens (1 for ERC-721). Null otherwise' }) tokenId!: string | null;
  @Field({ description: 'Block time, ISO 8601' }) timestamp!: string;
  @Field(() => ID) blockchainId!: string;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => ID, { nullable: true, description: 'The deposit address; null for the master wallet address' }) addressId!: string | null;
  @Field(() => TransferAmlFlagType, { nullable: true, description: 'Set when the sender of an incoming transfer is on a sanctions list; null otherwise' }) aml!: TransferAmlFlagType | null;
}

@ObjectType()
export class CursorPageInfoType {
  @Field() hasMore!: boolean;
  @Field(() => String, { nullable: true, description: 'Pass as `cursor` for the next page; null on the last' }) nextCursor!: string | null;
}

@ObjectType({ description: "The spec's master wallet transfer list wrapper" })
export class TransferListType implements ChainTransferPage {
  @Field(() => [TransferRecordType]) transfer!: TransferRecordType[];
  @Field(() => CursorPageInfoType) pageInfo!: CursorPageInfoType;
  @Field(() => Int, { description: 'Records matching the filters, across all pages' }) totalCount!: number;
}

@ArgsType()
export class TransferListArgs extends DateRangeArgs implements ChainTransferFilter {
  @Field(() => String, { nullable: true, description: 'incoming or outgoing; both when absent' }) @IsOptional() @IsIn(['incoming', 'outgoing']) direction?: 'incoming' | 'outgoing';
  @Field(() => String, { defaultValue: 'DESC', description: 'ASC (oldest first) or DESC (newest first), by block' }) @IsIn(['ASC', 'DESC']) sort: 'ASC' | 'DESC' = 'DESC';
  @Field(() => String, { nullable: true, description: 'pageInfo.nextCursor of the previous page' }) @IsOptional() cursor?: string;
  @Field(() => Int, { defaultValue: PAGE_LIMIT.default }) @Min(PAGE_LIMIT.min) @Max(PAGE_LIMIT.max) limit: number = PAGE_LIMIT.default;
  @Field(() => String, { nullable: true, description: 'Only this asset' }) @IsOptional() @IsIdFilter() assetId?: string;
  @Field(() => String, { nullable: true, description: 'Only this chain' }) @IsOptional() @IsIdFilter() blockchainId?: string;
  @Field(() => String, { nullable: true, description: 'CONFIRMED or REVERTED; both when absent' }) @IsOptional() @IsIn(['CONFIRMED', 'REVERTED']) status?: 'CONFIRMED' | 'REVERTED';
  @Field(() => String, { nullable: true, description: 'Only this category: external, erc20, erc721, erc1155, internal or specialnft; every one when absent' }) @IsOptional() @IsIn(TRANSFER_CATEGORIES) category?: TransferCategory;
}

@ObjectType('NftHolding', { description: 'An NFT the address holds now (read from the chain): its collection, token id and how many' })
export class NftHoldingType implements NftHoldingView {
  @Field(() => AssetType, { description: 'The collection: an asset of standard ERC721 or ERC1155, decimals 0' }) asset!: AssetType;
  @Field(() => ID) blockchainId!: string;
  @Field({ description: 'ERC721 or ERC1155' }) standard!: string;
  @Field({ description: 'The token id, decimal' }) tokenId!: string;
  @Field({ description: 'How many of the id the address holds (ERC-721: "1")' }) amount!: string;
}

@ArgsType()
export class NftHoldingArgs {
  @Field(() => String, { nullable: true, description: 'One chain; default every chain' }) @IsOptional() @IsIdFilter() blockchainId?: string;
}
