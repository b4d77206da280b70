import { Arg, Args, Authorized, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { NftHoldingArgs, NftHoldingType, TransferListArgs, TransferListType } from './chain-transfer.types';
import type { DepositsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type ChainTransferResolverServices = Pick<DepositsServices, 'chainTransferHistory' | 'nftHoldings'>;
type Context = GraphQLContext<ChainTransferResolverServices>;

/** The recorded on-chain transfers of a master wallet or a deposit address. */
@Resolver()
export class ChainTransferResolver {
  @Authorized('read')
  @Query(() => TransferListType, { description: 'Transfers to and from the master wallet and its deposit addresses, cursor-paged' })
  masterWalletTransactions(@Arg('id', () => ID) id: string, @Args() args: TransferListArgs, @Ctx() ctx: Context): Promise<TransferListType> {
    return ctx.services.chainTransferHistory.list(ctx.principal.organizationId, { masterWalletId: id }, args);
  }

  @Authorized('read')
  @Query(() => TransferListType, { description: 'Transfers to and from one deposit address, cursor-paged' })
  addressTransactions(@Arg('id', () => ID) id: string, @Args() args: TransferListArgs, @Ctx() ctx: Context): Promise<TransferListType> {
    return ctx.services.chainTransferHistory.list(ctx.principal.organizationId, { addressId: id }, args);
  }

  @Authorized('read')
  @Query(() => [NftHoldingType], { description: "The NFTs the master wallet's own address holds, read from the chain" })
  masterWalletNfts(@Arg('id', () => ID) id: string, @Args() args: NftHoldingArgs, @Ctx() ctx: Context): Promise<NftHoldingType[]> {
    return ctx.services.nftHoldings.list(ctx.principal.organizationId, { masterWalletId: id }, args);
  }

  @Authorized('read')
  @Query(() => [NftHoldingType], { description: 'The NFTs one deposit address holds, read from the chain' })
  addressNfts(@Arg('id', () => ID) id: string, @Args() args: NftHoldingArgs, @Ctx() ctx: Context): Promise<NftHoldingType[]> {
    return ctx.services.nftHoldings.list(ctx.principal.organizationId, { addressId: id }, args);
  }
}
