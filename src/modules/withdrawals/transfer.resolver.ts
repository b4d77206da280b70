import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { EstimateGasInput, GasEstimateType, TransferFilterArgs, TransferInput, TransferPage, TransferType } from './transfer.types';
import type { WithdrawalsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type TransferResolverServices = Pick<WithdrawalsServices, 'transfers'>;
type Context = GraphQLContext<TransferResolverServices>;

@Resolver()
export class TransferResolver {
  @Authorized('write')
  @Mutation(() => TransferType, { description: 'Sends assets from the master wallet address: one transaction per line, queued or held for approval' })
  transferFromMasterWallet(@Arg('id', () => ID) id: string, @Arg('input') input: TransferInput, @Ctx() ctx: Context): Promise<TransferType> {
    return ctx.services.transfers.create(ctx.principal.organizationId, ctx.principal.apiKeyId, { masterWalletId: id }, input);
  }

  @Authorized('write')
  @Mutation(() => TransferType, { description: 'Sends assets from a deposit address' })
  transferFromAddress(@Arg('id', () => ID) id: string, @Arg('input') input: TransferInput, @Ctx() ctx: Context): Promise<TransferType> {
    return ctx.services.transfers.create(ctx.principal.organizationId, ctx.principal.apiKeyId, { addressId: id }, input);
  }

  @Authorized('write')
  @Mutation(() => GasEstimateType, { description: 'What sending these lines from the master wallet would cost in gas at current fees' })
  estimateTransferGas(@Arg('id', () => ID) id: string, @Arg('input') input: EstimateGasInput, @Ctx() ctx: Context): Promise<GasEstimateType> {
    return ctx.services.transfers.gasEstimates.estimate(ctx.principal.organizationId, id, input.assets);
  }

  @Authorized('read')
  @Query(() => TransferPage, { description: 'Withdrawals, sweeps and gas top-ups, newest first' })
  transfers(@Args() args: TransferFilterArgs, @Ctx() ctx: Context): Promise<TransferPage> {
    return ctx.services.transfers.queries.list(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => TransferType)
  transfer(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<TransferType> {
    return ctx.services.transfers.queries.get(ctx.principal.organizationId, id);
  }

  @Authorized('admin')
  @Mutation(() => TransferType, { description: 'Releases a transfer held by security.requireApprovalForTransfers (admin keys only; never the key that asked for it: 403, another administrator must approve)' })
  approveTransfer(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<TransferType> {
    return ctx.services.transfers.approvals.decide(ctx.principal.organizationId, ctx.principal.apiKeyId, id, true);
  }

  @Authorized('admin')
  @Mutation(() => TransferType, {
    description:
      "Asks for a transfer still being sent (QUEUED or SUBMITTED) to be cancelled (admin keys only; EVM chains): lines not yet signed fail at once; a signed line's nonce is given a zero-value transaction to the sender, dearer than the line's own. Whichever is mined decides: the cancellation (the line FAILED, refunded, its gas charged) or the line's own (it stands). Answers the transfer with cancelRequestedAt; its lines settle as the sender acts.",
  })
  cancelTransfer(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<TransferType> {
    return ctx.services.transfers.cancellations.request(ctx.principal.organizationId, id);
  }

  @Authorized('admin')
  @Mutation(() => TransferType, { description: 'Refuses a transfer held for approval (admin keys only; the key that asked for it may withdraw it so)' })
  rejectTransfer(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<TransferType> {
    return ctx.services.transfers.approvals.decide(ctx.principal.organizationId, ctx.principal.apiKeyId, id, false);
  }
}
