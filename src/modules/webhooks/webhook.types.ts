import { ArrayMaxSize, ArrayMinSize, IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { JSONObject } from '../../graphql-kit/types/scalars';
import type { EventEnvelope } from '../../platform/events/outbox';
import { DeliveryStatus } from './webhook.domain';

registerEnumType(DeliveryStatus, {
  name: 'WebhookDeliveryStatus',
  description: 'PENDING: not yet attempted (or a resend is queued). SUCCESS: a 2xx answer. FAILED: the last attempt failed; nextAttemptAt says whether another is scheduled.',
});

@ObjectType('WebhookSubscription')
export class WebhookSubscriptionType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => String, { nullable: true, description: 'The API key that created the subscription' }) developerId!: string | null;
  @Field() url!: string;
  @Field(() => [String]) eventTypes!: string[];
  @Field(() => String, {
    nullable: true,
    description:
      "The signing secret (whsec_…): in the create and rotate responses only, null on reads and lists (and the update and delete answers). A deliberate difference from the spec, which returns it with the subscription: Keel shows a secret once, as it does an API key's, and never again. Keep it when it is shown; to get a new one, rotate it (POST /v1/webhooks/{subscriptionId}/secret/rotate, GraphQL rotateWebhookSecret): the old one keeps signing for the grace period",
  })
  secret!: string | null;
  @Field() isActive!: boolean;
  @Field(() => Date, { nullable: true, description: 'Start of the current run of failed deliveries' }) failingSince!: Date | null;
  @Field(() => Date, { nullable: true }) deactivatedAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'Why Keel deactivated the subscription (410 Gone, or failing too long)' })
  deactivationReason!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('WebhookSubscriptionPage')
export class WebhookSubscriptionPage extends Page(WebhookSubscriptionType) {}

@ArgsType()
export class WebhookListArgs extends PageArgs {
  @Field(() => Boolean, { nullable: true }) @IsOptional() isActive?: boolean;
}

@InputType('CreateWebhookInput')
export class CreateWebhookInput {
  @Field({ description: 'HTTPS URL on a public address' }) @Length(1, 2048) url!: string;
  @Field() @Length(1, 200) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 1000) description?: string;
  @Field(() => [String], { description: 'Dotted event names, wildcards (address.*, master.*, payment_link.*, payment_link_transfer.*, payment_intent.*, *) or upper-case identifiers' })
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  eventTypes!: string[];
}

@InputType('UpdateWebhookInput')
export class UpdateWebhookInput {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 2048) url?: string;
  @Field(() => Boolean, { nullable: true, description: 'true reactivates a deactivated subscription' }) @IsOptional() isActive?: boolean;
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMinSize(1) @ArrayMaxSize(100) eventTypes?: string[];
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 200) name?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 1000) description?: string;
}

@InputType('RotateWebhookSecretInput')
export class RotateWebhookSecretInput {
  @Field(() => Int, { nullable: true, description: 'How long the previous secret keeps signing, in seconds (default 86400, at most 604800)' })
  @IsOptional()
  @Min(0)
  @Max(604_800)
  gracePeriodSeconds?: number;
}

@InputType('RecoverWebhookInput')
export class RecoverWebhookInput {
  @Field({ description: 'Re-send every FAILED delivery created at or after this time' }) since!: Date;
}

@ObjectType('WebhookRecovery')
export class WebhookRecoveryType {
  @Field(() => Int, { description: 'How many failed deliveries were queued again' }) resent!: number;
}

@ObjectType('WebhookDelivery', { description: 'One event sent to one subscription, with every attempt folded into it' })
export class WebhookDeliveryType {
  @Field(() => ID) id!: string;
  @Field(() => ID) subscriptionId!: string;
  @Field(() => ID, { description: 'The event id; the same on every attempt, so receivers can deduplicate' }) eventId!: string;
  @Field({ description: 'Event type identifier' }) type!: string;
  @Field(() => JSONObject, { description: 'The event body as sent' }) payload!: Record<string, unknown>;
  @Field(() => DeliveryStatus) status!: DeliveryStatus;
  @Field(() => Int, { nullable: true }) responseStatusCode!: number | null;
  @Field(() => String, { nullable: true }) errorMessage!: string | null;
  @Field(() => Int, { description: 'Attempts after the first' }) retryCount!: number;
  @Field(() => Int) attempts!: number;
  @Field(() => Date, { nullable: true, description: 'When the next attempt is due; null when none is scheduled' }) nextAttemptAt!: Date | null;
  @Field(() => Date, { nullable: true }) lastAttemptAt!: Date | null;
  @Field(() => Date, { nullable: true }) deliveredAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('WebhookDeliveryPage')
export class WebhookDeliveryPage extends Page(WebhookDeliveryType) {}

@ArgsType()
export class WebhookDeliveryListArgs extends PageArgs {
  @Field(() => ID, { nullable: true }) @IsOptional() @IsIdFilter() subscriptionId?: string;
  @Field(() => DeliveryStatus, { nullable: true }) @IsOptional() status?: DeliveryStatus;
}

@ObjectType('Event', { description: "An event in the spec's envelope, as webhooks deliver it" })
export class EventType implements EventEnvelope {
  @Field(() => ID) id!: string;
  @Field() type!: string;
  @Field() version!: string;
  @Field() timestamp!: string;
  @Field() environment!: string;
  @Field(() => JSONObject) data!: Record<string, unknown>;
}

@ObjectType('UpperCaseEventType')
export class UpperCaseEventTypeType {
  @Field({ description: 'Spelled exactly as the spec spells it' }) identifier!: string;
  @Field(() => [String], { description: 'The dotted event names it covers' }) covers!: string[];
}

@ObjectType('WebhookEventTypes', { description: 'Every value eventTypes accepts' })
export class WebhookEventTypesType {
  @Field(() => [String]) names!: string[];
  @Field(() => [String]) wildcards!: string[];
  @Field(() => [UpperCaseEventTypeType]) upperCase!: UpperCaseEventTypeType[];
}
