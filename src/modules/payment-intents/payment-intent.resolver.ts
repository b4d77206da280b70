import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { CancelPaymentIntentInput, CreatePaymentIntentInput, PaymentIntentListArgs, PaymentIntentPage, PaymentIntentType } from './payment-intent.types';
import type { PaymentIntentsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type PaymentIntentResolverServices = Pick<PaymentIntentsServices, 'paymentIntents'>;
type Context = GraphQLContext<PaymentIntentResolverServices>;

@Resolver()
export class PaymentIntentResolver {
  @Authorized('write')
  @Mutation(() => PaymentIntentType, { description: 'Creates a payment intent with its own deposit address and expiry (payment_intent.created); honours Idempotency-Key' })
  createPaymentIntent(@Arg('input') input: CreatePaymentIntentInput, @Ctx() ctx: Context): Promise<PaymentIntentType> {
    return ctx.services.paymentIntents.create(ctx.principal.organizationId, input);
  }

  @Authorized('read')
  @Query(() => PaymentIntentPage, { description: 'Payment intents, newest first (status, masterWalletId, from, to)' })
  paymentIntents(@Args() args: PaymentIntentListArgs, @Ctx() ctx: Context): Promise<PaymentIntentPage> {
    return ctx.services.paymentIntents.list(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => PaymentIntentType)
  paymentIntent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<PaymentIntentType> {
    return ctx.services.paymentIntents.get(ctx.principal.organizationId, id);
  }

  @Authorized('write')
  @Mutation(() => PaymentIntentType, { description: 'Cancels a REQUIRES_PAYMENT or UNDERPAID intent (payment_intent.cancelled); 409 otherwise' })
  cancelPaymentIntent(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => CancelPaymentIntentInput, { nullable: true }) input: CancelPaymentIntentInput | undefined,
    @Ctx() ctx: Context,
  ): Promise<PaymentIntentType> {
    return ctx.services.paymentIntents.cancel(ctx.principal.organizationId, id, input?.reason);
  }
}
