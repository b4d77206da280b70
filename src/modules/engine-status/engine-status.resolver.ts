import { Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { EngineStatusType } from './engine-status.types';
import type { EngineStatusServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type EngineStatusResolverServices = Pick<EngineStatusServices, 'engineStatus'>;
type Context = GraphQLContext<EngineStatusResolverServices>;

@Resolver()
export class EngineStatusResolver {
  @Authorized('orderbook_market:read')
  @Query(() => EngineStatusType)
  engineStatus(@Ctx() ctx: Context): Promise<EngineStatusType> {
    return ctx.services.engineStatus.status();
  }
}
