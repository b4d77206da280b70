import { ArrayMaxSize, ArrayMinSize, IsOptional, Length, Max, Min } from 'class-validator';
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Page } from '../../graphql-kit/types/page';
import { Tier } from '../organizations';
import { ApiKeyHost, ApiKeyStatus } from './api-key.domain';
import type { Environment, Host } from './api-key.domain';
import type { ApiKeyView, ApiKeyWithSecretView, CreateApiKey } from './api-key.service';

registerEnumType(ApiKeyHost, { name: 'ApiKeyHost', description: 'The host a key is valid on' });

registerEnumType(ApiKeyStatus, { name: 'ApiKeyStatus' });

@ObjectType('ApiKey', { description: 'An API key. The secret itself is shown once, at creation or rotation.' })
export class ApiKeyType implements ApiKeyView {
  @Field(() => ID) id!: string;
  @Field(() => ID) organizationId!: string;
  @Field() name!: string;
  @Field(() => ApiKeyHost) host!: Host;
  @Field(() => String) environment!: Environment;
  @Field(() => [String], { description: 'Core: read, write, admin. Pro: order-book permission names.' }) scopes!: string[];
  @Field(() => Tier) tier!: Tier;
  @Field({ description: 'The leading characters of the key, to recognise it' }) prefix!: string;
  @Field(() => ApiKeyStatus) status!: ApiKeyStatus;
  @Field(() => Date, { nullable: true }) lastRotatedAt!: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
  @Field(() => ID, { nullable: true, description: "The agent this key belongs to (its one scope is 'agent'); null for the organisation's own keys" })
  agentId!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('ApiKeyWithSecret', { description: 'An API key together with its secret, returned once' })
export class ApiKeyWithSecretType extends ApiKeyType implements ApiKeyWithSecretView {
  @Field({ description: 'The full key. Store it now: Keel keeps only a hash.' }) secret!: string;
  @Field(() => Date, { nullable: true, description: 'After a rotation: when the previous secret stops working' })
  previousSecretExpiresAt!: Date | null;
}

@ObjectType('ApiKeyPage')
export class ApiKeyPage extends Page(ApiKeyType) {}

@InputType('CreateApiKeyInput')
export class CreateApiKeyInput implements CreateApiKey {
  @Field() @Length(1, 100) name!: string;
  @Field(() => ApiKeyHost, { defaultValue: ApiKeyHost.CORE }) host: Host = ApiKeyHost.CORE;
  @Field(() => [String], { description: "Core: any of read, write, admin. Pro: order-book permission names but orderbook_market:manage (the operator's alone)." })
  @ArrayMinSize(1)
  @ArrayMaxSize(10)
  scopes!: string[];
  @Field(() => Tier, { nullable: true, description: "Rate-limit tier; defaults to, and may not exceed, the organisation's tier" })
  @IsOptional()
  tier?: Tier;
}

@InputType('RotateApiKeyInput')
export class RotateApiKeyInput {
  @Field(() => Int, { nullable: true, description: 'How long the previous secret keeps working, in seconds (default 86400, at most 604800)' })
  @IsOptional()
  @Min(0)
  @Max(604_800)
  gracePeriodSeconds?: number;
}
