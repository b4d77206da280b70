import { Arg, Args, Authorized, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { IdArg } from '../../graphql/types/id';
import { KeelError } from '../../platform/errors';
import { TransferListArgs, TransferListType } from './transfer.types';

function filters(args: TransferListArgs): TransferListArgs {
  for (const field of ['assetId', 'blockchainId'] as const) {
    if (args[field] !== undefined && !IdArg.isUuid(args[field]!)) throw KeelError.invalidField(field, 'must be a UUID');
  }
  return args;
}

@Resolver()
export class TransferResolver {
  @Authorized('read')
  @Query(() => TransferListType, { description: 'Transfers to and from the master wallet and its deposit addresses, cursor-paged' })
  masterWalletTransactions(@Arg('id', () => ID) id: string, @Args() args: TransferListArgs, @Ctx() ctx: GraphQLContext): Promise<TransferListType> {
    if (!IdArg.isUuid(id)) throw new KeelError('WALLET_NOT_FOUND', 'Master wallet not found');
    return ctx.services.transferHistory.list(ctx.principal.organizationId, { masterWalletId: id.toLowerCase() }, filters(args));
  }

  @Authorized('read')
  @Query(() => TransferListType, { description: 'Transfers to and from one deposit address, cursor-paged' })
  addressTransactions(@Arg('id', () => ID) id: string, @Args() args: TransferListArgs, @Ctx() ctx: GraphQLContext): Promise<TransferListType> {
    return ctx.services.transferHistory.list(ctx.principal.organizationId, { addressId: IdArg.uuid('Address', id) }, filters(args));
  }
}
