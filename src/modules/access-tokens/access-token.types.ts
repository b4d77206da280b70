import { ArrayMaxSize, ArrayMinSize, IsOptional, Min } from 'class-validator';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import type { AccessTokenRequest, AccessTokenView, RealtimeAuthRequest } from './access-token.service';

@ObjectType('AccessToken', { description: 'A short-lived bearer token, shown once: send it as `Authorization: Bearer <token>`, or as the graphql-ws connection parameter `token`' })
export class AccessTokenType implements AccessTokenView {
  @Field({ description: 'The token itself (a signed JWT); Keel does not keep it' }) token!: string;
  @Field({ description: 'Always Bearer' }) tokenType!: string;
  @Field({ description: 'After this the token gets 401 TOKEN_EXPIRED' }) expiresAt!: Date;
  @Field(() => Int, { description: 'Lifetime in seconds' }) expiresIn!: number;
  @Field({ description: 'The host the token is valid on (core or pro), that of the issuing key' }) host!: string;
  @Field(() => ID) organizationId!: string;
  @Field(() => ID, { description: 'The issuing API key: revoking it revokes the token at once' }) apiKeyId!: string;
  @Field(() => [String], { description: 'Core scopes or order-book permissions the token carries' }) scopes!: string[];
  @Field(() => [String], { nullable: true, description: 'Realtime channels the token is narrowed to; null: every channel its permissions allow' })
  channels!: string[] | null;
}

/** What every token request may say about its lifetime. */
@InputType('TokenLifetimeInput')
class TokenLifetimeInput {
  @Field(() => Int, { nullable: true, description: "Lifetime in seconds; default ACCESS_TOKEN_DEFAULT_TTL_SECONDS (900), at most ACCESS_TOKEN_MAX_TTL_SECONDS (3600); a key's previous secret, in its rotation grace period, issues tokens that end with the grace period" })
  @IsOptional()
  @Min(1)
  ttlSeconds?: number | null;
}

@InputType('CreateAccessTokenInput')
export class CreateAccessTokenInput extends TokenLifetimeInput implements AccessTokenRequest {
  @Field(() => [String], {
    nullable: true,
    description: "Core: any of read, write, admin; pro: order-book permission names. Each must be granted by the issuing key (else 403). Default: all of the key's",
  })
  @IsOptional()
  @ArrayMinSize(1)
  @ArrayMaxSize(10)
  scopes?: string[] | null;
}

@InputType('RealtimeAuthInput')
export class RealtimeAuthInput extends TokenLifetimeInput implements RealtimeAuthRequest {
  @Field(() => [String], {
    nullable: true,
    description: 'Channels to narrow the token to: book:<SYMBOL>, trades:<SYMBOL>, ticker:<SYMBOL>, candles:<SYMBOL> (orderbook_market:read), orders, fills, balances (orderbook_order:read), settlement (orderbook_settlement:read). Default: every channel the permissions allow',
  })
  @IsOptional()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  channels?: string[] | null;
  @Field(() => [String], { nullable: true, description: "Order-book permissions the token carries, each granted by the key (else 403). Default: what the channels named need (public market channels: orderbook_market:read only); without channels, the key's orderbook_market:read and orderbook_order:read" })
  @IsOptional()
  @ArrayMinSize(1)
  @ArrayMaxSize(10)
  permissions?: string[] | null;
}
