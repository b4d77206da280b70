import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { AmlCheckBatchInput, AmlCheckBatchType, FlaggedTransferArgs, FlaggedTransferPage, FlaggedTransferType, ReleaseFlaggedTransferInput, SanctionsListsType } from './aml.types';
import type { AmlServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type AmlResolverServices = Pick<AmlServices, 'aml' | 'flaggedTransfers'>;
type Context = GraphQLContext<AmlResolverServices>;

@Resolver()
export class AmlResolver {
  @Authorized('write')
  @Mutation(() => AmlCheckBatchType, { description: 'Screens 1 to 50 addresses against the sanctions lists, one at a time; a mutation because the spec makes it a POST (nothing changes)' })
  amlCheckBatch(@Arg('input') input: AmlCheckBatchInput, @Ctx() ctx: Context): AmlCheckBatchType {
    return ctx.services.aml.checkBatch(input.addresses);
  }

  @Authorized('read')
  @Query(() => SanctionsListsType, { description: 'The sanctions lists in use: source, date and sizes' })
  amlLists(@Ctx() ctx: Context): SanctionsListsType {
    return ctx.services.aml.lists();
  }

  @Authorized('read')
  @Query(() => FlaggedTransferPage, { description: 'Incoming transfers from sanctioned addresses, newest flag first (released filter)' })
  amlFlaggedTransfers(@Args() args: FlaggedTransferArgs, @Ctx() ctx: Context): Promise<FlaggedTransferPage> {
    return ctx.services.flaggedTransfers.list(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => FlaggedTransferType)
  amlFlaggedTransfer(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<FlaggedTransferType> {
    return ctx.services.flaggedTransfers.get(ctx.principal.organizationId, id);
  }

  @Authorized('admin')
  @Mutation(() => FlaggedTransferType, { description: "Releases a flagged transfer's hold on auto-sweep after review (admin keys only; recorded with the key and the note)" })
  releaseAmlFlaggedTransfer(@Arg('id', () => ID) id: string, @Arg('input') input: ReleaseFlaggedTransferInput, @Ctx() ctx: Context): Promise<FlaggedTransferType> {
    return ctx.services.flaggedTransfers.release(ctx.principal.organizationId, ctx.principal.apiKeyId, id, input.note);
  }
}
