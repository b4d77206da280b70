import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { SignatureFilterArgs, SignaturePage, SignatureType, SignMessageInput, SignTransactionInput, SignTypedDataInput } from './signing.types';
import type { SigningServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type SigningResolverServices = Pick<SigningServices, 'signing'>;
type Context = GraphQLContext<SigningResolverServices>;

/**
 * A signature is a usable credential (a signed transaction not sent may be broadcast by whoever
 * holds it): shown only to keys that may sign (admin); a read key sees the request and its outcome.
 */
function shownTo<T extends { signature: string | null }>(ctx: Context, view: T): T {
  return ctx.principal.can('admin') ? view : { ...view, signature: null };
}

@Resolver()
export class SigningResolver {
  @Authorized('admin')
  @Mutation(() => SignatureType, { description: "Signs a message (EIP-191 personal_sign) with the master wallet's key (admin keys only)" })
  signMessageWithMasterWallet(@Arg('id', () => ID) id: string, @Arg('input') input: SignMessageInput, @Ctx() ctx: Context): Promise<SignatureType> {
    return ctx.services.signing.signMessage(ctx.principal.organizationId, ctx.principal.apiKeyId, { masterWalletId: id }, input);
  }

  @Authorized('admin')
  @Mutation(() => SignatureType, { description: "Signs a message (EIP-191 personal_sign) with a deposit address's key (admin keys only)" })
  signMessageWithAddress(@Arg('id', () => ID) id: string, @Arg('input') input: SignMessageInput, @Ctx() ctx: Context): Promise<SignatureType> {
    return ctx.services.signing.signMessage(ctx.principal.organizationId, ctx.principal.apiKeyId, { addressId: id }, input);
  }

  @Authorized('admin')
  @Mutation(() => SignatureType, { description: "Signs EIP-712 typed data with the master wallet's key; spending grants (Permit, Permit2) need acknowledgeRisk and security.allowSpendingApprovals; typed data for Keel's settlement contract (under its domain, or carrying a call of it) is refused (FORBIDDEN)" })
  signTypedDataWithMasterWallet(@Arg('id', () => ID) id: string, @Arg('input') input: SignTypedDataInput, @Ctx() ctx: Context): Promise<SignatureType> {
    return ctx.services.signing.signTypedData(ctx.principal.organizationId, ctx.principal.apiKeyId, { masterWalletId: id }, input);
  }

  @Authorized('admin')
  @Mutation(() => SignatureType, { description: "Signs EIP-712 typed data with a deposit address's key" })
  signTypedDataWithAddress(@Arg('id', () => ID) id: string, @Arg('input') input: SignTypedDataInput, @Ctx() ctx: Context): Promise<SignatureType> {
    return ctx.services.signing.signTypedData(ctx.principal.organizationId, ctx.principal.apiKeyId, { addressId: id }, input);
  }

  @Authorized('admin')
  @Mutation(() => SignatureType, { description: "Signs a transaction with the master wallet's key, or sends it through the transaction sender (broadcast); a call of Keel's settlement contract is refused (FORBIDDEN, naming to): its balances move through depositToTrading and withdrawFromTrading" })
  signTransactionWithMasterWallet(@Arg('id', () => ID) id: string, @Arg('input') input: SignTransactionInput, @Ctx() ctx: Context): Promise<SignatureType> {
    return ctx.services.signing.signTransaction(ctx.principal.organizationId, ctx.principal.apiKeyId, { masterWalletId: id }, input);
  }

  @Authorized('admin')
  @Mutation(() => SignatureType, { description: "Signs a transaction with a deposit address's key, or sends it (broadcast)" })
  signTransactionWithAddress(@Arg('id', () => ID) id: string, @Arg('input') input: SignTransactionInput, @Ctx() ctx: Context): Promise<SignatureType> {
    return ctx.services.signing.signTransaction(ctx.principal.organizationId, ctx.principal.apiKeyId, { addressId: id }, input);
  }

  @Authorized('read')
  @Query(() => SignaturePage, { description: "The master wallet's own signing requests and their outcomes, newest first" })
  async masterWalletSignatures(@Arg('id', () => ID) id: string, @Args() args: SignatureFilterArgs, @Ctx() ctx: Context): Promise<SignaturePage> {
    const page = await ctx.services.signing.list(ctx.principal.organizationId, { masterWalletId: id }, args);
    return { ...page, items: page.items.map((v) => shownTo(ctx, v)) };
  }

  @Authorized('read')
  @Query(() => SignaturePage, { description: "A deposit address's signing requests and their outcomes, newest first" })
  async addressSignatures(@Arg('id', () => ID) id: string, @Args() args: SignatureFilterArgs, @Ctx() ctx: Context): Promise<SignaturePage> {
    const page = await ctx.services.signing.list(ctx.principal.organizationId, { addressId: id }, args);
    return { ...page, items: page.items.map((v) => shownTo(ctx, v)) };
  }

  @Authorized('read')
  @Query(() => SignatureType, { description: 'One signing request and its outcome' })
  async signature(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<SignatureType> {
    return shownTo(ctx, await ctx.services.signing.get(ctx.principal.organizationId, id));
  }
}
