import { Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { OrganizationUsageType } from './quota.types';
import type { QuotasServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type QuotaResolverServices = Pick<QuotasServices, 'quotas'>;
type Context = GraphQLContext<QuotaResolverServices>;

@Resolver(() => OrganizationUsageType)
export class QuotaResolver {
  @Authorized('read')
  @Query(() => OrganizationUsageType, { description: "The calling organisation's requests this month, by day and by key, against its monthly quota" })
  organizationUsage(@Ctx() ctx: Context): Promise<OrganizationUsageType> {
    return ctx.services.quotas.usage(ctx.principal.organizationId);
  }
}
