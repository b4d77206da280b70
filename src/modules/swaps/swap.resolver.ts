import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { SwapFilterArgs, SwapInputType, SwapPage, SwapQuoteArgs, SwapQuoteType, SwapType } from './swap.types';
import type { SwapsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type SwapResolverServices = Pick<SwapsServices, 'swaps'>;
type Context = GraphQLContext<SwapResolverServices>;

@Resolver()
export class SwapResolver {
  @Authorized('read')
  @Query(() => SwapQuoteType, { description: "A quote from the chain's DEX: expected and minimum output, price impact, route, fees and gas" })
  swapQuote(@Args() args: SwapQuoteArgs, @Ctx() ctx: Context): Promise<SwapQuoteType> {
    return ctx.services.swaps.quote(args);
  }

  @Authorized('write')
  @Mutation(() => SwapType, { description: 'Swaps from a master wallet or deposit address; the minimum output is enforced on chain' })
  createSwap(@Arg('input') input: SwapInputType, @Ctx() ctx: Context): Promise<SwapType> {
    return ctx.services.swaps.create(ctx.principal.organizationId, ctx.principal.apiKeyId, input);
  }

  @Authorized('read')
  @Query(() => SwapPage, { description: 'Swaps, newest first' })
  swaps(@Args() args: SwapFilterArgs, @Ctx() ctx: Context): Promise<SwapPage> {
    return ctx.services.swaps.list(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => SwapType)
  swap(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<SwapType> {
    return ctx.services.swaps.get(ctx.principal.organizationId, id);
  }
}
