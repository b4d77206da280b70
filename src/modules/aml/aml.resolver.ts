import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { AmlCheckBatchInput, AmlCheckBatchType, SanctionsListsType } from './aml.types';

@Resolver()
export class AmlResolver {
  @Authorized('write')
  @Mutation(() => AmlCheckBatchType, { description: 'Screens 1 to 50 addresses against the sanctions lists, one at a time; a mutation because the spec makes it a POST (nothing changes)' })
  amlCheckBatch(@Arg('input') input: AmlCheckBatchInput, @Ctx() ctx: GraphQLContext): AmlCheckBatchType {
    return ctx.services.aml.checkBatch(input.addresses);
  }

  @Authorized('read')
  @Query(() => SanctionsListsType, { description: 'The sanctions lists in use: source, date and sizes' })
  amlLists(@Ctx() ctx: GraphQLContext): SanctionsListsType {
    return ctx.services.aml.lists();
  }
}
