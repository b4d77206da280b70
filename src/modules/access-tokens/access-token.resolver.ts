import { Arg, Authorized, Ctx, Mutation, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { AccessTokenType, CreateAccessTokenInput, RealtimeAuthInput } from './access-token.types';
import type { AccessTokensServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type AccessTokenResolverServices = Pick<AccessTokensServices, 'accessTokens'>;
type Context = GraphQLContext<AccessTokenResolverServices>;

/** Both hosts: a key issues a short-lived token for its own host, never wider than itself. */
@Resolver()
export class AccessTokenResolver {
  // Any key may narrow itself: the service refuses whatever the key does not hold.
  @Authorized()
  @Mutation(() => AccessTokenType, { description: "Issues a short-lived bearer token for browsers, narrowed to the scopes asked for (at most the key's); revoking the key revokes it" })
  createAccessToken(@Arg('input', () => CreateAccessTokenInput, { nullable: true }) input: CreateAccessTokenInput | undefined, @Ctx() ctx: Context): Promise<AccessTokenType> {
    return ctx.services.accessTokens.issue(ctx.principal, input ?? {});
  }
}

/** The order book's realtime channel authorisation (the engine operations group). */
@Resolver()
export class RealtimeAuthResolver {
  @Authorized('orderbook_market:read')
  @Mutation(() => AccessTokenType, { description: 'Authorises realtime channels: a short-lived token for the graphql-ws connection parameter `token`, narrowed to the channels named' })
  authorizeRealtime(@Arg('input', () => RealtimeAuthInput, { nullable: true }) input: RealtimeAuthInput | undefined, @Ctx() ctx: Context): Promise<AccessTokenType> {
    return ctx.services.accessTokens.authorizeRealtime(ctx.principal, input ?? {});
  }
}
