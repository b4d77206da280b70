import { ArrayMaxSize, ArrayMinSize, IsOptional, Length, MaxLength } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import type { AmlBatchView, AmlIdentificationView, AmlResultView, SanctionsListsView } from './aml.service';
import type { FlaggedTransferFilter, FlaggedTransferView } from './flagged-transfer.service';
import { SanctionListEntryType } from '../deposits/chain-transfer.types';

@ObjectType('AmlIdentification', { description: 'A sanctions list entry the address matched' })
export class AmlIdentificationType implements AmlIdentificationView {
  @Field({ description: 'SANCTIONS' }) category!: string;
  @Field({ description: 'The list, e.g. "OFAC SDN digital currency address (ETH)"' }) name!: string;
  @Field() description!: string;
  @Field({ description: 'Where the list can be searched' }) url!: string;
  @Field({ description: 'The list the entry is on: ETH, ARB, BSC, USDT, USDC, XBT, TRX, …' }) list!: string;
  @Field({ description: 'The entry as the list writes it (EVM addresses are compared case-insensitively)' }) listedAddress!: string;
}

@ObjectType('AmlCheckResult')
export class AmlCheckResultType implements AmlResultView {
  @Field({ description: 'The address as given' }) address!: string;
  @Field() isSanctioned!: boolean;
  @Field(() => [AmlIdentificationType], { description: 'Every list entry that matched (empty when not sanctioned)' }) identifications!: AmlIdentificationType[];
}

@ObjectType('SanctionsListCount')
export class SanctionsListCountType {
  @Field() name!: string;
  @Field(() => Int) entries!: number;
}

@ObjectType('SanctionsLists', { description: 'The sanctions lists Keel screens against' })
export class SanctionsListsType implements SanctionsListsView {
  @Field({ description: 'The shipped snapshot, or the file or directory a newer list was loaded from with `keel aml load`' }) source!: string;
  @Field(() => String, { nullable: true, description: 'The date of the list (YYYY-MM-DD)' }) listDate!: string | null;
  @Field({ description: 'Since when this process screens against it' }) activeSince!: Date;
  @Field(() => Int, { description: 'Distinct addresses across all lists' }) addressCount!: number;
  @Field(() => [SanctionsListCountType]) lists!: SanctionsListCountType[];
}

@ObjectType('AmlCheckBatch')
export class AmlCheckBatchType implements AmlBatchView {
  @Field(() => [AmlCheckResultType]) data!: AmlCheckResultType[];
  @Field(() => Int) totalChecked!: number;
  @Field(() => SanctionsListsType) screenedAgainst!: SanctionsListsType;
}

@InputType('AmlCheckBatchInput')
export class AmlCheckBatchInput {
  @Field(() => [String], { description: '1 to 50 addresses of any chain; EVM addresses in any case' })
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @MaxLength(128, { each: true })
  addresses!: string[];
}

@ObjectType('FlaggedTransfer', { description: 'An incoming transfer from a sanctioned address: its address is held from auto-sweep until an admin releases it' })
export class FlaggedTransferType implements FlaggedTransferView {
  @Field(() => ID, { description: "The chain transfer's id, as in the wallet's transaction history" }) id!: string;
  @Field() hash!: string;
  @Field(() => Int) logIndex!: number;
  @Field() blockNumber!: string;
  @Field({ description: 'The sanctioned sender' }) from!: string;
  @Field() to!: string;
  @Field({ description: 'Whole units of the asset' }) amount!: string;
  @Field({ description: 'Smallest units' }) rawValue!: string;
  @Field(() => ID) assetId!: string;
  @Field() symbol!: string;
  @Field(() => ID) blockchainId!: string;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => ID, { nullable: true, description: 'The deposit address; null for the master wallet address' }) addressId!: string | null;
  @Field({ description: 'CONFIRMED, or REVERTED when a reorg took it back' }) status!: string;
  @Field() flaggedAt!: Date;
  @Field(() => [SanctionListEntryType], { description: 'The list entries the sender matched' }) matches!: SanctionListEntryType[];
  @Field(() => Date, { nullable: true, description: 'When an admin released the hold; null while it holds' }) releasedAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'The API key that released it' }) releasedBy!: string | null;
  @Field(() => String, { nullable: true }) releaseNote!: string | null;
}

@ObjectType('FlaggedTransferPage')
export class FlaggedTransferPage extends Page(FlaggedTransferType) {}

@ArgsType()
export class FlaggedTransferArgs extends PageArgs implements FlaggedTransferFilter {
  @Field(() => Boolean, { nullable: true, description: 'true: released only; false: still held only' }) @IsOptional() released?: boolean;
}

@InputType('ReleaseFlaggedTransferInput')
export class ReleaseFlaggedTransferInput {
  @Field({ description: 'Why the hold is lifted (kept with the transfer and sent in the event)' }) @Length(1, 1000) note!: string;
}
