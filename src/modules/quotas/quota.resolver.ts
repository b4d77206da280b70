import { Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { OrganizationUsageType } from './quota.types';

@Resolver(() => OrganizationUsageType)
export class QuotaResolver {
  @Authorized('read')
  @Query(() => OrganizationUsageType, { description: "The calling organisation's requests this month, by day and by key, against its monthly quota" })
  organizationUsage(@Ctx() ctx: GraphQLContext): Promise<OrganizationUsageType> {
    return ctx.services.quotas.usage(ctx.principal.organizationId);
  }
}
