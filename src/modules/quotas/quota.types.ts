import { Field, ID, Int, ObjectType } from 'type-graphql';
import { ApiKeyHost } from '../api-keys';
import type { Host } from '../../platform/auth/permissions';
import type { DailyUsageView, KeyUsageView, UsageView } from './quota.service';

@ObjectType('DailyUsage')
export class DailyUsageType implements DailyUsageView {
  @Field({ description: 'UTC day, YYYY-MM-DD' }) day!: string;
  @Field(() => Int) requests!: number;
}

@ObjectType('KeyUsage')
export class KeyUsageType implements KeyUsageView {
  @Field(() => ID) apiKeyId!: string;
  @Field(() => String, { nullable: true, description: "The key's name; null for a key that no longer exists" }) name!: string | null;
  @Field(() => ApiKeyHost, { nullable: true }) host!: Host | null;
  @Field(() => Int) requests!: number;
}

@ObjectType('OrganizationUsage', {
  description: "The organisation's requests this UTC calendar month, across its keys and both hosts, against its monthly quota (429 QUOTA_EXCEEDED once used reaches limit)",
})
export class OrganizationUsageType implements UsageView {
  @Field({ description: 'YYYY-MM' }) month!: string;
  @Field(() => Int, { description: 'Requests allowed this month: the tier\'s quota, or the one an operator set' }) limit!: number;
  @Field(() => Int, { description: 'Requests counted this month (what the quota is decided on)' }) used!: number;
  @Field(() => Int) remaining!: number;
  @Field({ description: 'When the quota resets: the next month\'s first instant (UTC)' }) resetAt!: Date;
  @Field({ description: 'Whether an operator set this organisation\'s quota rather than its tier' }) limitSetByOperator!: boolean;
  @Field(() => [DailyUsageType], { description: 'Requests per UTC day with any; other nodes\' last few seconds may not be in yet' }) byDay!: DailyUsageType[];
  @Field(() => [KeyUsageType], { description: 'Requests per API key this month, most first' }) byKey!: KeyUsageType[];
}
