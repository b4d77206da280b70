import { ArrayMaxSize, ArrayMinSize, MaxLength } from 'class-validator';
import { Field, InputType, Int, ObjectType } from 'type-graphql';
import type { AmlBatchView, AmlIdentificationView, AmlResultView, SanctionsListsView } from './aml.service';

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
