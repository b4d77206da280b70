import { ArrayMaxSize, IsOptional, Length, Max, Min, ValidateNested } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import type {
  SettlementDestination,
  SettlementExecutionView,
  SettlementRuleFilter,
  SettlementRuleInput,
  SettlementRulePatch,
  SettlementRuleView,
  SettlementSource,
  SettlementSourceView,
} from './settlement-rule.service';

const ORDER_DOC = 'How a swap is routed when the destination asset differs (see the swap order): FASTEST (default), CHEAPEST, RECOMMENDED, NO_SLIPPAGE';

@InputType()
export class SettlementSourceInput implements SettlementSource {
  @Field({ description: 'The chain whose deposits the rule matches' }) @Length(1, 64) blockchainId!: string;
  @Field(() => [String], { nullable: true, description: 'Assets matched; every asset of the chain when empty or absent' }) @IsOptional() @ArrayMaxSize(50) assetIds?: string[] | null;
  @Field(() => String, { nullable: true, description: 'Smallest deposit matched, whole units of the deposit asset (inclusive); none when absent or empty' }) @IsOptional() @Length(0, 80) minAmount?: string | null;
  @Field(() => String, { nullable: true, description: 'Largest deposit matched, whole units (inclusive); unbounded when absent or empty' }) @IsOptional() @Length(0, 80) maxAmount?: string | null;
}

@InputType()
export class SettlementDestinationInput implements SettlementDestination {
  @Field({ description: 'Must be the source chain' }) @Length(1, 64) blockchainId!: string;
  @Field({ description: 'The asset the destination receives: a sweep when the deposit is in it, else a swap on the DEX' }) @Length(1, 64) assetId!: string;
  @Field({ description: "EVM address; must be one of the wallet's security.allowedRecipients when that list is set" }) @Length(1, 100) address!: string;
}

@InputType()
export class SettlementRuleCreateInput implements SettlementRuleInput {
  @Field(() => String, { nullable: true, description: "A master wallet's rule: deposits to the wallet's own address (give this or addressId)" }) @IsOptional() @Length(1, 64) masterWalletId?: string | null;
  @Field(() => String, { nullable: true, description: 'A deposit address rule (give this or masterWalletId)' }) @IsOptional() @Length(1, 64) addressId?: string | null;
  @Field() @Length(1, 100) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) description?: string | null;
  @Field(() => String, { nullable: true, description: ORDER_DOC }) @IsOptional() @Length(1, 20) order?: string | null;
  @Field(() => String, { nullable: true, description: 'Percent, 0 to 50 (default "0.5")' }) @IsOptional() @Length(1, 10) slippageTolerance?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'Default true' }) @IsOptional() isActive?: boolean | null;
  @Field(() => SettlementSourceInput) @ValidateNested() source!: SettlementSourceInput;
  @Field(() => SettlementDestinationInput) @ValidateNested() destination!: SettlementDestinationInput;
  @Field(() => Int, { nullable: true, description: 'Seconds to wait after a deposit is confirmed (default 0, at most 30 days)' }) @IsOptional() @Min(0) @Max(2_592_000) delay?: number | null;
}

@InputType()
export class SettlementRuleUpdateInput implements SettlementRulePatch {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 100) name?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) description?: string | null;
  @Field(() => String, { nullable: true, description: ORDER_DOC }) @IsOptional() @Length(1, 20) order?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 10) slippageTolerance?: string | null;
  @Field(() => Boolean, { nullable: true }) @IsOptional() isActive?: boolean | null;
  @Field(() => SettlementSourceInput, { nullable: true, description: 'Replaces the source as a whole' }) @IsOptional() @ValidateNested() source?: SettlementSourceInput | null;
  @Field(() => SettlementDestinationInput, { nullable: true, description: 'Replaces the destination as a whole' }) @IsOptional() @ValidateNested() destination?: SettlementDestinationInput | null;
  @Field(() => Int, { nullable: true }) @IsOptional() @Min(0) @Max(2_592_000) delay?: number | null;
}

@ObjectType('SettlementRuleSource')
export class SettlementSourceType implements SettlementSourceView {
  @Field(() => ID) blockchainId!: string;
  @Field(() => [String], { description: 'Empty: every asset of the chain' }) assetIds!: string[];
  @Field({ description: 'Smallest deposit matched, whole units of the deposit asset (inclusive); "0" when the rule sets none' }) minAmount!: string;
  @Field({ description: 'Largest deposit matched, whole units (inclusive); "" (empty) when unbounded' }) maxAmount!: string;
}

@ObjectType('SettlementRuleDestination')
export class SettlementDestinationType implements SettlementDestination {
  @Field(() => ID) blockchainId!: string;
  @Field(() => ID) assetId!: string;
  @Field() address!: string;
}

@ObjectType('SettlementRule', { description: 'Sweeps or converts deposits to a wallet automatically once they are confirmed' })
export class SettlementRuleType implements SettlementRuleView {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() description!: string;
  @Field(() => ID, { description: 'The master wallet id (walletType MASTER) or the deposit address id (ADDRESS)' }) walletId!: string;
  @Field({ description: 'MASTER or ADDRESS' }) walletType!: string;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => ID, { nullable: true }) addressId!: string | null;
  @Field({ description: 'FASTEST, CHEAPEST, RECOMMENDED or NO_SLIPPAGE' }) order!: string;
  @Field({ description: 'Percent' }) slippageTolerance!: string;
  @Field() isActive!: boolean;
  @Field(() => SettlementSourceType) source!: SettlementSourceType;
  @Field(() => SettlementDestinationType) destination!: SettlementDestinationType;
  @Field(() => Int, { description: 'Seconds between a deposit being confirmed and the rule executing' }) delay!: number;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('SettlementRulePage')
export class SettlementRulePage extends Page(SettlementRuleType) {}

@ObjectType('SettlementRuleDeletion')
export class SettlementRuleDeletionType {
  @Field(() => SettlementRuleType) data!: SettlementRuleType;
  @Field() message!: string;
}

@ObjectType('SettlementExecutionAsset')
export class SettlementExecutionAssetType {
  @Field(() => ID) id!: string;
  @Field() symbol!: string;
}

@ObjectType('SettlementRuleExecution', { description: 'What a rule did with one deposit: at most one per rule and deposit' })
export class SettlementExecutionType implements SettlementExecutionView {
  @Field(() => ID) id!: string;
  @Field(() => ID) ruleId!: string;
  @Field(() => ID, { description: 'The chain transfer (deposit) it settles' }) depositId!: string;
  @Field() depositTxHash!: string;
  @Field(() => SettlementExecutionAssetType) asset!: SettlementExecutionAssetType;
  @Field({ description: 'The deposit amount, whole units' }) amount!: string;
  @Field(() => String, { nullable: true, description: 'sweep or swap, once prepared' }) kind!: string | null;
  @Field({
    description:
      'PENDING (waiting for its delay or its next attempt), SUBMITTED (its sweep or swap is queued), EXECUTED (confirmed on chain), FAILED (out of attempts, or refused for good), CANCELLED (the rule was deactivated or deleted, or a reorg took the deposit back, before it ran; or an older rule that also matches the deposit settles it: a deposit is settled by one rule only)',
  })
  status!: string;
  @Field(() => Int) attempts!: number;
  @Field(() => Date, { nullable: true }) nextAttemptAt!: Date | null;
  @Field(() => ID, { nullable: true }) transferId!: string | null;
  @Field(() => ID, { nullable: true }) swapId!: string | null;
  @Field(() => String, { nullable: true }) txHash!: string | null;
  @Field(() => String, { nullable: true, description: 'Why the last attempt failed or why it was cancelled' }) error!: string | null;
  @Field(() => Date, { nullable: true, description: 'Set when a reorg took the deposit back after the execution was sent: the funds stay sent' }) depositRevertedAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('SettlementRuleExecutionPage')
export class SettlementExecutionPage extends Page(SettlementExecutionType) {}

@ArgsType()
export class SettlementRuleFilterArgs extends PageArgs implements SettlementRuleFilter {
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() masterWalletId?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() addressId?: string | null;
  @Field(() => Boolean, { nullable: true }) @IsOptional() isActive?: boolean | null;
}
