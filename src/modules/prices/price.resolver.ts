import { Arg, Authorized, Ctx, Mutation, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { TokenPriceListType, TokenPricesInput } from './price.types';
import type { PricesServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type PriceResolverServices = Pick<PricesServices, 'prices'>;
type Context = GraphQLContext<PriceResolverServices>;

@Resolver()
export class PriceResolver {
  @Authorized('write')
  @Mutation(() => TokenPriceListType, { description: 'USD prices of 1 to 100 tokens by symbol; a mutation because the spec makes it a POST (nothing changes)' })
  tokenPrices(@Arg('input') input: TokenPricesInput, @Ctx() ctx: Context): Promise<TokenPriceListType> {
    return ctx.services.prices.pricesBySymbol(input.symbols);
  }
}
