import { Arg, Args, Authorized, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { AssetListArgs, AssetPage, AssetType, BlockchainListArgs, BlockchainPage, BlockchainType } from './chain.types';
import type { ChainsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type ChainResolverServices = Pick<ChainsServices, 'chains'>;
type Context = GraphQLContext<ChainResolverServices>;

@Resolver()
export class ChainResolver {
  @Authorized('read')
  @Query(() => BlockchainPage, { description: 'The chains this deployment runs on' })
  async blockchains(@Args() args: BlockchainListArgs, @Ctx() ctx: Context): Promise<BlockchainPage> {
    return ctx.services.chains.listBlockchains(args);
  }

  @Authorized('read')
  @Query(() => BlockchainType)
  async blockchain(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<BlockchainType> {
    return ctx.services.chains.getBlockchain(id);
  }

  @Authorized('read')
  @Query(() => AssetPage, { description: 'Native coins and tokens, filtered by blockchainId, symbol or isNative' })
  async assets(@Args() args: AssetListArgs, @Ctx() ctx: Context): Promise<AssetPage> {
    return ctx.services.chains.listAssets(args);
  }

  @Authorized('read')
  @Query(() => AssetType)
  async asset(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AssetType> {
    return ctx.services.chains.getAsset(id);
  }
}
