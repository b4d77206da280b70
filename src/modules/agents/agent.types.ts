import { ArrayMaxSize, IsIn, IsOptional, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { JSONObject } from '../../graphql-kit/types/scalars';
import { NON_NEGATIVE_DECIMAL_STRING } from '../../platform/decimal';
import { BlockchainType } from '../chains/chain.types';
import type { AgentFilter, AgentView, CreateAgent, UpdateAgent } from './agent.service';
import { AgentPaymentStatus, AgentStatus } from './agent.domain';
import type { AgentAddressWalletView, AgentWalletView, CreateAgentWallet } from './agent-wallet.service';
import type { AgentPolicyView, AssetLimitInput as AssetLimitInputShape, PolicyChangeView, PolicyInput } from './agent-policy.service';
import type { AgentPaymentFilter, AgentPaymentView, RequestAgentPayment } from './agent-payment.service';
import type { AssetLimit, PolicyRules } from './policy-engine';

registerEnumType(AgentStatus, { name: 'AgentStatus', description: "ACTIVE: its key works. SUSPENDED: its key is revoked and its payments refused; resuming issues a new key" });

registerEnumType(AgentPaymentStatus, {
  name: 'AgentPaymentStatus',
  description:
    'PENDING: above an approval threshold, waiting for an administrator. POLICY_DENIED: refused by the policy (or rejected by an administrator); denialReason says why. APPROVED: allowed and queued for sending. SUBMITTED: signed and broadcast (waasTxHash set). EXECUTED: mined and confirmed. FAILED: the transaction could not be sent or reverted (failureReason).',
});

const DECIMAL_MESSAGE = 'must be a non-negative decimal string such as "100.5"';

@ObjectType('Agent', { description: "An organisation's autonomous caller: its own API key (scope 'agent'), wallets and spending policy" })
export class AgentType implements AgentView {
  @Field(() => ID) id!: string;
  @Field(() => ID) organizationId!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => AgentStatus) status!: AgentStatus;
  @Field(() => String, { nullable: true, description: "The leading characters of the agent's key, to recognise it; never the key" }) apiKeyPrefix!: string | null;
  @Field(() => JSONObject) metadata!: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: "The agent's API key: in the create and resume responses only. Store it now: Keel keeps only a hash" })
  apiKey!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('AgentPage')
export class AgentPage extends Page(AgentType) {}

@ArgsType()
export class AgentListArgs extends PageArgs implements AgentFilter {
  @Field(() => AgentStatus, { nullable: true }) @IsOptional() status?: AgentStatus;
}

@InputType('CreateAgentInput')
export class CreateAgentInput implements CreateAgent {
  @Field() @Length(1, 200) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 1000) description?: string;
  @Field(() => JSONObject, { nullable: true }) @IsOptional() metadata?: Record<string, unknown>;
}

@InputType('UpdateAgentInput')
export class UpdateAgentInput implements UpdateAgent {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 200) name?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 1000) description?: string;
  @Field(() => JSONObject, { nullable: true, description: 'Replaces the metadata' }) @IsOptional() metadata?: Record<string, unknown>;
}

@ObjectType('AgentAddressWallet', { description: "The agent wallet's address: a deposit address of a master wallet" })
export class AgentAddressWalletType implements AgentAddressWalletView {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field() walletAddress!: string;
  @Field() network!: string;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => BlockchainType) blockchain!: BlockchainType;
  @Field(() => JSONObject) metadata!: Record<string, unknown>;
  @Field() isActive!: boolean;
  @Field(() => [BlockchainType]) enabledBlockchains!: BlockchainType[];
  @Field(() => JSONObject, { description: "aml, disableAutoSweep, enableGaslessWithdraw, enableMultiChain, settlement, security, notifications: read from the master wallet's configurations" })
  configurations!: Record<string, unknown>;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('AgentWallet', { description: 'A deposit address linked to an agent: the agent pays from it' })
export class AgentWalletType implements AgentWalletView {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => ID) organizationId!: string;
  @Field(() => ID) addressId!: string;
  @Field(() => ID) blockchainId!: string;
  @Field(() => String, { nullable: true }) label!: string | null;
  @Field() isActive!: boolean;
  @Field(() => AgentAddressWalletType) addressWallet!: AgentAddressWalletType;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('AgentWalletPage')
export class AgentWalletPage extends Page(AgentWalletType) {}

@InputType('CreateAgentWalletInput')
export class CreateAgentWalletInput implements CreateAgentWallet {
  @Field({ description: 'The chain of the new address' }) @Length(1, 64) blockchainId!: string;
  @Field(() => String, { nullable: true, description: "The master wallet to derive it under; default: the organisation's oldest active master wallet enabled on the chain" })
  @IsOptional()
  @IsIdFilter()
  masterWalletId?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 200) label?: string;
}

@ObjectType('AgentAssetLimit', { description: "Limits in one asset's whole units; null: no such limit" })
export class AssetLimitType implements AssetLimit {
  @Field(() => ID) assetId!: string;
  @Field(() => String, { nullable: true, description: 'Most one payment may move' }) maxPerPayment!: string | null;
  @Field(() => String, { nullable: true, description: 'Most the payments of the rolling window may move together' }) maxPerWindow!: string | null;
  @Field(() => String, { nullable: true, description: "Payments above this wait for an administrator's approval" }) approvalAbove!: string | null;
}

@InputType('AgentAssetLimitInput')
export class AssetLimitInput implements AssetLimitInputShape {
  @Field() @Length(1, 64) assetId!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Matches(NON_NEGATIVE_DECIMAL_STRING, { message: DECIMAL_MESSAGE }) maxPerPayment?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Matches(NON_NEGATIVE_DECIMAL_STRING, { message: DECIMAL_MESSAGE }) maxPerWindow?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Matches(NON_NEGATIVE_DECIMAL_STRING, { message: DECIMAL_MESSAGE }) approvalAbove?: string;
}

@ObjectType('AgentPolicyRules')
export class PolicyRulesType implements PolicyRules {
  @Field(() => [String], { description: 'The chains payments may be on (empty: none)' }) allowedBlockchainIds!: string[];
  @Field(() => [String], { description: 'The assets payments may move (empty: none)' }) allowedAssetIds!: string[];
  @Field({ description: 'When false, only allowedRecipients may be paid' }) allowAnyRecipient!: boolean;
  @Field(() => [String]) allowedRecipients!: string[];
  @Field(() => [String], { description: 'Never paid, whatever else the policy says' }) deniedRecipients!: string[];
  @Field(() => [AssetLimitType]) assetLimits!: AssetLimitType[];
  @Field(() => String, { nullable: true }) maxPerPaymentUsd!: string | null;
  @Field(() => String, { nullable: true }) maxPerWindowUsd!: string | null;
  @Field(() => String, { nullable: true, description: "Payments worth more than this in USD wait for an administrator's approval" }) approvalAboveUsd!: string | null;
  @Field(() => Int, { description: 'The rolling window of the per-window limits, in seconds' }) windowSeconds!: number;
}

@ObjectType('AgentPolicy', { description: "An agent's spending policy. Without one, every payment is denied" })
export class AgentPolicyType extends PolicyRulesType implements AgentPolicyView {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => Int, { description: 'Raised by each change' }) version!: number;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@InputType('AgentPolicyInput', { description: 'The whole policy: what is left out takes its deny-by-default value (empty lists, no limits, windowSeconds 86400)' })
export class PolicyInputType implements PolicyInput {
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(100) allowedBlockchainIds?: string[];
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(1_000) allowedAssetIds?: string[];
  @Field(() => Boolean, { nullable: true, description: 'Default false: only allowedRecipients may be paid' }) @IsOptional() allowAnyRecipient?: boolean;
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(1_000) allowedRecipients?: string[];
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(1_000) deniedRecipients?: string[];
  @Field(() => [AssetLimitInput], { nullable: true }) @IsOptional() @ArrayMaxSize(1_000) @ValidateNested({ each: true }) assetLimits?: AssetLimitInput[];
  @Field(() => String, { nullable: true }) @IsOptional() @Matches(NON_NEGATIVE_DECIMAL_STRING, { message: DECIMAL_MESSAGE }) maxPerPaymentUsd?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Matches(NON_NEGATIVE_DECIMAL_STRING, { message: DECIMAL_MESSAGE }) maxPerWindowUsd?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Matches(NON_NEGATIVE_DECIMAL_STRING, { message: DECIMAL_MESSAGE }) approvalAboveUsd?: string;
  @Field(() => Int, { nullable: true, description: 'Seconds, 60 to 2678400 (31 days); default 86400' }) @IsOptional() @Min(60) @Max(2_678_400) windowSeconds?: number;
}

@ObjectType('AgentPolicyChange', { description: 'One audited change of an agent policy' })
export class PolicyChangeType implements PolicyChangeView {
  @Field(() => ID) id!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => ID) policyId!: string;
  @Field(() => Int) version!: number;
  @Field(() => ID, { nullable: true, description: 'The API key that made the change' }) changedBy!: string | null;
  @Field(() => PolicyRulesType, { nullable: true, description: 'The rules before; null for the first policy' }) previousRules!: PolicyRulesType | null;
  @Field(() => PolicyRulesType) rules!: PolicyRulesType;
  @Field() createdAt!: Date;
}

@ObjectType('AgentPolicyChangePage')
export class PolicyChangePage extends Page(PolicyChangeType) {}

@ObjectType('AgentPayment', { description: "A payment an agent requested, with the policy's evaluation of it" })
export class AgentPaymentType implements AgentPaymentView {
  @Field(() => ID) id!: string;
  @Field(() => ID) organizationId!: string;
  @Field(() => ID) agentId!: string;
  @Field(() => ID) agentWalletId!: string;
  @Field({ description: 'TRANSFER' }) kind!: string;
  @Field(() => AgentPaymentStatus) status!: AgentPaymentStatus;
  @Field(() => ID) assetId!: string;
  @Field(() => ID) blockchainId!: string;
  @Field() recipient!: string;
  @Field({ description: 'Whole units' }) amount!: string;
  @Field(() => String, { nullable: true, description: 'USD value when requested; null when no price could be had' }) amountUsd!: string | null;
  @Field(() => ID, { nullable: true }) policyId!: string | null;
  @Field(() => JSONObject, { description: '{decision, policyId, policyVersion, rules: [{rule, outcome PASS|FAIL|HOLD|SKIPPED, detail}], denialReason, evaluatedAt, screening, usdPrice, approval?}: the evaluation of the request. approval, once an administrator decided a held payment: {decision APPROVED|DENIED, by, at, screening, evaluation (the policy evaluated again at approval)} or {decision REJECTED, by, at, reason}' })
  policyEvaluation!: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'Why the payment was denied (POLICY_DENIED)' }) denialReason!: string | null;
  @Field(() => String, { nullable: true, description: 'The hash of the transaction that carries the payment' }) waasTxHash!: string | null;
  @Field(() => String, { nullable: true, description: 'Why sending failed (FAILED)' }) failureReason!: string | null;
  @Field(() => ID, { nullable: true, description: 'The transfer (kind agent_payment) that sends it' }) transferId!: string | null;
  @Field(() => String, { nullable: true }) idempotencyKey!: string | null;
  @Field(() => Date, { nullable: true, description: 'When an administrator approved or rejected it' }) decidedAt!: Date | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) executedAt!: Date | null;
  @Field() updatedAt!: Date;
}

@ObjectType('AgentPaymentPage')
export class AgentPaymentPage extends Page(AgentPaymentType) {}

@ArgsType()
export class AgentPaymentListArgs extends PageArgs implements AgentPaymentFilter {
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() agentWalletId?: string;
  @Field(() => AgentPaymentStatus, { nullable: true }) @IsOptional() status?: AgentPaymentStatus;
  @Field(() => String, { defaultValue: 'DESC', description: 'ASC (oldest first) or DESC (newest first), by creation time' }) @IsIn(['ASC', 'DESC']) sort: 'ASC' | 'DESC' = 'DESC';
}

@InputType('RequestAgentPaymentInput')
export class RequestAgentPaymentInput implements RequestAgentPayment {
  @Field({ description: 'The agent wallet to pay from' }) @Length(1, 64) agentWalletId!: string;
  @Field({ description: "An asset on the agent wallet's chain" }) @Length(1, 64) assetId!: string;
  @Field({ description: 'EVM address; mixed case must carry a valid checksum' }) @Length(1, 100) recipient!: string;
  @Field({ description: 'Whole units, e.g. "12.5"' }) @Length(1, 80) amount!: string;
  @Field(() => String, { nullable: true, description: 'The same key again returns the payment it first created; 409 if the request differs' })
  @IsOptional()
  @Length(1, 200)
  idempotencyKey?: string;
}

@InputType('RejectAgentPaymentInput')
export class RejectAgentPaymentInput {
  @Field(() => String, { nullable: true, description: 'Why; recorded in denialReason' }) @IsOptional() @Length(1, 500) reason?: string;
}
