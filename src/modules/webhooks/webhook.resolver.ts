import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { KeelError } from '../../platform/errors';
import { EVENT_NAMES, EVENT_WILDCARDS, eventTypesCover, UPPER_CASE_EVENT_TYPES, unknownEventTypes } from '../../platform/events/catalogue';
import type { EventEnvelope } from '../../platform/events/outbox';
import {
  CreateWebhookInput,
  EventType,
  RecoverWebhookInput,
  RotateWebhookSecretInput,
  UpdateWebhookInput,
  WebhookDeliveryListArgs,
  WebhookDeliveryPage,
  WebhookDeliveryType,
  WebhookEventTypesType,
  WebhookListArgs,
  WebhookRecoveryType,
  WebhookSubscriptionPage,
  WebhookSubscriptionType,
} from './webhook.types';
import type { WebhooksServices } from '.';
import type { LiveEventFeed } from '../../platform/events/live-feed';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type WebhookResolverServices = Pick<WebhooksServices, 'webhooks'> & { liveFeed: LiveEventFeed };
type Context = GraphQLContext<WebhookResolverServices>;

@Resolver()
export class WebhookResolver {
  @Authorized('read')
  @Query(() => WebhookEventTypesType, { description: 'Every value a subscription may list in eventTypes' })
  webhookEventTypes(): WebhookEventTypesType {
    return {
      names: [...EVENT_NAMES],
      wildcards: [...EVENT_WILDCARDS],
      upperCase: Object.entries(UPPER_CASE_EVENT_TYPES).map(([identifier, covers]) => ({ identifier, covers: [...covers] })),
    };
  }

  @Authorized('read')
  @Query(() => WebhookSubscriptionPage)
  webhooks(@Args() args: WebhookListArgs, @Ctx() ctx: Context): Promise<WebhookSubscriptionPage> {
    return ctx.services.webhooks.list(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => WebhookSubscriptionType)
  webhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookSubscriptionType> {
    return ctx.services.webhooks.get(ctx.principal.organizationId, id);
  }

  @Authorized('write')
  @Mutation(() => WebhookSubscriptionType, { description: 'Subscribes a URL to events; the response carries the signing secret' })
  createWebhook(@Arg('input') input: CreateWebhookInput, @Ctx() ctx: Context): Promise<WebhookSubscriptionType> {
    return ctx.services.webhooks.create(ctx.principal.organizationId, ctx.principal.apiKeyId, input);
  }

  @Authorized('write')
  @Mutation(() => WebhookSubscriptionType)
  updateWebhook(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateWebhookInput, @Ctx() ctx: Context): Promise<WebhookSubscriptionType> {
    return ctx.services.webhooks.update(ctx.principal.organizationId, id, input);
  }

  @Authorized('write')
  @Mutation(() => WebhookSubscriptionType, { description: 'Deletes the subscription and its delivery log' })
  deleteWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookSubscriptionType> {
    return ctx.services.webhooks.delete(ctx.principal.organizationId, id);
  }

  @Authorized('write')
  @Mutation(() => WebhookSubscriptionType, { description: 'A new signing secret; the old one keeps signing alongside it for the grace period' })
  rotateWebhookSecret(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => RotateWebhookSecretInput, { nullable: true }) input: RotateWebhookSecretInput | undefined,
    @Ctx() ctx: Context,
  ): Promise<WebhookSubscriptionType> {
    return ctx.services.webhooks.rotateSecret(ctx.principal.organizationId, id, input?.gracePeriodSeconds);
  }

  @Authorized('write')
  @Mutation(() => WebhookRecoveryType, { description: 'Re-sends every failed delivery created since a given time' })
  async recoverWebhook(@Arg('id', () => ID) id: string, @Arg('input') input: RecoverWebhookInput, @Ctx() ctx: Context): Promise<WebhookRecoveryType> {
    return { resent: await ctx.services.webhooks.recover(ctx.principal.organizationId, id, input.since) };
  }

  @Authorized('read')
  @Query(() => WebhookDeliveryPage, { description: 'The delivery log, newest first' })
  webhookEvents(@Args() args: WebhookDeliveryListArgs, @Ctx() ctx: Context): Promise<WebhookDeliveryPage> {
    return ctx.services.webhooks.listDeliveries(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => WebhookDeliveryType)
  webhookEvent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookDeliveryType> {
    return ctx.services.webhooks.getDelivery(ctx.principal.organizationId, id);
  }

  @Authorized('write')
  @Mutation(() => WebhookDeliveryType, { description: 'Attempts the delivery again now' })
  resendWebhookEvent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookDeliveryType> {
    return ctx.services.webhooks.resend(ctx.principal.organizationId, id);
  }

  @Authorized('read')
  @Subscription(() => EventType, {
    description: "The organisation's events as they are committed; types takes the same values as webhook eventTypes (default: all)",
    subscribe: ({ args, context: ctx }: SubscribeResolverData<unknown, { types?: string[] }, Context>) => {
      const types = args.types ?? ['*'];
      const unknown = unknownEventTypes(types);
      if (unknown.length) throw KeelError.invalidField('types', `unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
      return ctx.services.liveFeed.stream(ctx.principal.organizationId, (e) => eventTypesCover(types, e.type));
    },
  })
  events(@Root() envelope: EventEnvelope, @Arg('types', () => [String], { nullable: true }) _types?: string[]): EventType {
    return envelope;
  }
}
