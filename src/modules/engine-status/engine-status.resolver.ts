import { Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { EngineStatusType } from './engine-status.types';

@Resolver()
export class EngineStatusResolver {
  @Authorized('orderbook_market:read')
  @Query(() => EngineStatusType)
  engineStatus(@Ctx() ctx: GraphQLContext): Promise<EngineStatusType> {
    return ctx.services.engineStatus.status();
  }
}
