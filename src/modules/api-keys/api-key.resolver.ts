import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { PageArgs } from '../../graphql-kit/types/page';
import { ApiKeyPage, ApiKeyType, ApiKeyWithSecretType, CreateApiKeyInput, RotateApiKeyInput } from './api-key.types';
import { withSecret } from './api-key.service';
import { KEY_ADMIN } from '../../platform/auth/permissions';
import type { ApiKeysServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type ApiKeyResolverServices = Pick<ApiKeysServices, 'apiKeys'>;
type Context = GraphQLContext<ApiKeyResolverServices>;

@Resolver()
export class ApiKeyResolver {
  @Authorized('admin')
  @Query(() => ApiKeyPage, { description: "The organisation's API keys (never their secrets)" })
  apiKeys(@Args() page: PageArgs, @Ctx() ctx: Context): Promise<ApiKeyPage> {
    return ctx.services.apiKeys.list(ctx.principal.organizationId, page);
  }

  @Authorized('admin')
  @Query(() => ApiKeyType)
  apiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<ApiKeyType> {
    return ctx.services.apiKeys.get(ctx.principal.organizationId, id);
  }

  @Authorized(KEY_ADMIN)
  @Mutation(() => ApiKeyWithSecretType, { description: 'Creates a key; its secret is in the response and never again' })
  async createApiKey(@Arg('input') input: CreateApiKeyInput, @Ctx() ctx: Context): Promise<ApiKeyWithSecretType> {
    return withSecret(await ctx.services.apiKeys.create(ctx.principal.organizationId, input));
  }

  @Authorized(KEY_ADMIN)
  @Mutation(() => ApiKeyWithSecretType, { description: 'Issues a new secret; the old one keeps working for the grace period' })
  async rotateApiKey(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => RotateApiKeyInput, { nullable: true }) input: RotateApiKeyInput | undefined,
    @Ctx() ctx: Context,
  ): Promise<ApiKeyWithSecretType> {
    return withSecret(await ctx.services.apiKeys.rotate(ctx.principal.organizationId, id, input?.gracePeriodSeconds));
  }

  @Authorized(KEY_ADMIN)
  @Mutation(() => ApiKeyType, { description: 'Revokes a key at once, on every node' })
  revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<ApiKeyType> {
    return ctx.services.apiKeys.revoke(ctx.principal.organizationId, id);
  }
}
