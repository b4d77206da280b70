import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import {
  CreatePaymentLinkInput,
  PaymentLinkCheckoutListArgs,
  PaymentLinkCheckoutPage,
  PaymentLinkListArgs,
  PaymentLinkPage,
  PaymentLinkTransferListArgs,
  PaymentLinkTransferPage,
  PaymentLinkType,
  UpdatePaymentLinkInput,
} from './payment-link.types';
import type { PaymentLinksServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type PaymentLinkResolverServices = Pick<PaymentLinksServices, 'paymentLinks'>;
type Context = GraphQLContext<PaymentLinkResolverServices>;

@Resolver()
export class PaymentLinkResolver {
  @Authorized('write')
  @Mutation(() => PaymentLinkType, { description: 'Creates a payment link and its hosted checkout page (payment_link.created)' })
  createPaymentLink(@Arg('input') input: CreatePaymentLinkInput, @Ctx() ctx: Context): Promise<PaymentLinkType> {
    return ctx.services.paymentLinks.create(ctx.principal.organizationId, input);
  }

  @Authorized('read')
  @Query(() => PaymentLinkPage, { description: 'Payment links, newest first (isActive, masterWalletId, currency, search, from, to)' })
  paymentLinks(@Args() args: PaymentLinkListArgs, @Ctx() ctx: Context): Promise<PaymentLinkPage> {
    return ctx.services.paymentLinks.list(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => PaymentLinkType)
  paymentLink(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<PaymentLinkType> {
    return ctx.services.paymentLinks.get(ctx.principal.organizationId, id);
  }

  @Authorized('read')
  @Query(() => PaymentLinkType, { description: "One of the organisation's payment links by its slug" })
  paymentLinkBySlug(@Arg('slug') slug: string, @Ctx() ctx: Context): Promise<PaymentLinkType> {
    return ctx.services.paymentLinks.getBySlug(ctx.principal.organizationId, slug);
  }

  @Authorized('write')
  @Mutation(() => PaymentLinkType, { description: 'Changes any field of the link (payment_link.updated); new terms apply to new checkouts only' })
  updatePaymentLink(@Arg('id', () => ID) id: string, @Arg('input') input: UpdatePaymentLinkInput, @Ctx() ctx: Context): Promise<PaymentLinkType> {
    return ctx.services.paymentLinks.update(ctx.principal.organizationId, id, input);
  }

  @Authorized('write')
  @Mutation(() => PaymentLinkType, { description: 'isActive false: no new checkouts (payment_link.updated)' })
  deactivatePaymentLink(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<PaymentLinkType> {
    return ctx.services.paymentLinks.deactivate(ctx.principal.organizationId, id);
  }

  @Authorized('write')
  @Mutation(() => PaymentLinkType, { description: 'Deletes the link (payment_link.deleted); its page and API answer 404 from now on' })
  deletePaymentLink(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<PaymentLinkType> {
    return ctx.services.paymentLinks.delete(ctx.principal.organizationId, id);
  }

  @Authorized('read')
  @Query(() => PaymentLinkTransferPage, { description: 'Deposits to the link\'s checkout addresses, newest first (kind, status)' })
  paymentLinkTransfers(@Arg('id', () => ID) id: string, @Args() args: PaymentLinkTransferListArgs, @Ctx() ctx: Context): Promise<PaymentLinkTransferPage> {
    return ctx.services.paymentLinks.transfers(ctx.principal.organizationId, id, args);
  }

  @Authorized('read')
  @Query(() => PaymentLinkCheckoutPage, { description: "The link's checkout sessions, newest first (status)" })
  paymentLinkCheckouts(@Arg('id', () => ID) id: string, @Args() args: PaymentLinkCheckoutListArgs, @Ctx() ctx: Context): Promise<PaymentLinkCheckoutPage> {
    return ctx.services.paymentLinks.checkouts(ctx.principal.organizationId, id, args);
  }
}
