import { Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { OrganizationType } from './organization.types';

@Resolver(() => OrganizationType)
export class OrganizationResolver {
  @Authorized('read')
  @Query(() => OrganizationType, { description: 'The organisation that owns the calling API key' })
  organization(@Ctx() ctx: GraphQLContext): Promise<OrganizationType> {
    return ctx.services.organizations.get(ctx.principal.organizationId);
  }
}
