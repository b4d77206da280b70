import { Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { OrganizationType } from './organization.types';
import type { OrganizationsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type OrganizationResolverServices = Pick<OrganizationsServices, 'organizations'>;
type Context = GraphQLContext<OrganizationResolverServices>;

@Resolver(() => OrganizationType)
export class OrganizationResolver {
  @Authorized('read')
  @Query(() => OrganizationType, { description: 'The organisation that owns the calling API key' })
  organization(@Ctx() ctx: Context): Promise<OrganizationType> {
    return ctx.services.organizations.get(ctx.principal.organizationId);
  }
}
