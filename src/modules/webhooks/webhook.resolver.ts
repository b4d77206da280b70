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

/**
 * An event's signature (a signing event: a signed transaction not sent, a permit) is a usable
 * credential: shown to admin keys only, as the signing records show it (signing.resolver.ts).
 */
function shownTo<T extends { data?: unknown }>(ctx: Context, envelope: T): T {
  const data = envelope.data as Record<string, unknown> | undefined;
  if (ctx.principal.can('admin') || !data || typeof data !== 'object' || data.signature == null) return envelope;
  return { ...envelope, data: { ...data, signature: null } };
}

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
    return ctx.services.webhooks.create(ctx.principal.organizationId, ctx.principal.apiKeyId, input, ctx.principal.can('admin'));
  }

  @Authorized('write')
  @Mutation(() => WebhookSubscriptionType)
  updateWebhook(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateWebhookInput, @Ctx() ctx: Context): Promise<WebhookSubscriptionType> {
    return ctx.services.webhooks.update(ctx.principal.organizationId, id, input, ctx.principal.can('admin'));
  }

  @Authorized('write')
  @Mutation(() => WebhookSubscriptionType, { description: 'Deletes the subscription and its delivery log' })
  deleteWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookSubscriptionType> {
    return ctx.services.webhooks.delete(ctx.principal.organizationId, id, ctx.principal.can('admin'));
  }

  @Authorized('write')
  @Mutation(() => WebhookSubscriptionType, { description: 'A new signing secret; the old one keeps signing alongside it for the grace period' })
  rotateWebhookSecret(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => RotateWebhookSecretInput, { nullable: true }) input: RotateWebhookSecretInput | undefined,
    @Ctx() ctx: Context,
  ): Promise<WebhookSubscriptionType> {
    return ctx.services.webhooks.rotateSecret(ctx.principal.organizationId, id, input?.gracePeriodSeconds, ctx.principal.can('admin'));
  }

  @Authorized('write')
  @Mutation(() => WebhookRecoveryType, { description: 'Re-sends every failed delivery created since a given time' })
  async recoverWebhook(@Arg('id', () => ID) id: string, @Arg('input') input: RecoverWebhookInput, @Ctx() ctx: Context): Promise<WebhookRecoveryType> {
    return { resent: await ctx.services.webhooks.recover(ctx.principal.organizationId, id, input.since, ctx.principal.can('admin')) };
  }

  @Authorized('read')
  @Query(() => WebhookDeliveryPage, { description: 'The delivery log, newest first' })
  async webhookEvents(@Args() args: WebhookDeliveryListArgs, @Ctx() ctx: Context): Promise<WebhookDeliveryPage> {
    const page = await ctx.services.webhooks.listDeliveries(ctx.principal.organizationId, args);
    return { ...page, items: page.items.map((d) => ({ ...d, payload: shownTo(ctx, d.payload) })) };
  }

  @Authorized('read')
  @Query(() => WebhookDeliveryType)
  async webhookEvent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookDeliveryType> {
    const delivery = await ctx.services.webhooks.getDelivery(ctx.principal.organizationId, id);
    return { ...delivery, payload: shownTo(ctx, delivery.payload) };
  }

  @Authorized('write')
  @Mutation(() => WebhookDeliveryType, { description: 'Attempts the delivery again now' })
  async resendWebhookEvent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<WebhookDeliveryType> {
    const delivery = await ctx.services.webhooks.resend(ctx.principal.organizationId, id, ctx.principal.can('admin'));
    return { ...delivery, payload: shownTo(ctx, delivery.payload) };
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
  events(@Root() envelope: EventEnvelope, @Ctx() ctx: Context, @Arg('types', () => [String], { nullable: true }) _types?: string[]): EventType {
    return shownTo(ctx, envelope);
  }
}
