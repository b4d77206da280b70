import { Arg, Authorized, Ctx, Field, ID, InputType, Mutation, ObjectType, Resolver } from 'type-graphql';
import { IsOptional, Length } from 'class-validator';
import type { GraphQLContext } from '../../graphql-kit/context';
import type { DevFaucetServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type DevFaucetResolverServices = Pick<DevFaucetServices, 'devFaucet'>;
type Context = GraphQLContext<DevFaucetResolverServices>;

@InputType()
export class DevFaucetInput {
  @Field(() => String, { nullable: true, description: 'Default: the first EVM dev chain; the sandbox Solana network by its id' }) @IsOptional() blockchainId?: string;
  @Field() @Length(1, 100) address!: string;
  @Field(() => String, { nullable: true, description: 'Asset id or symbol (USDC, USDT, DAI, ETH, or the test NFT collections KNFT (ERC-721) and KITEM (ERC-1155)); default the native coin' }) @IsOptional() @Length(1, 64) asset?: string;
  @Field({ description: 'Whole units, e.g. "250.5"; at most 1,000,000. An NFT collection: how many tokens (ERC-721: "1")' }) @Length(1, 80) amount!: string;
  @Field(() => String, { nullable: true, description: 'ERC-1155 test collection: the token id to mint (required); ERC-721 mints its next id' }) @IsOptional() @Length(1, 78) tokenId?: string;
}

@ObjectType()
export class DevFaucetResultType {
  @Field() txHash!: string;
  @Field(() => ID) blockchainId!: string;
  @Field(() => ID) assetId!: string;
  @Field() symbol!: string;
  @Field() to!: string;
  @Field() amount!: string;
  @Field(() => String, { nullable: true, description: 'The minted token id, for an NFT collection; null otherwise' }) tokenId!: string | null;
}

@Resolver()
export class DevFaucetResolver {
  @Authorized('write')
  @Mutation(() => DevFaucetResultType, { description: 'Sandbox only: sends dev coins or test tokens (or mints a test NFT) on a Keel dev chain, mined before it answers' })
  devFaucet(@Arg('input') input: DevFaucetInput, @Ctx() ctx: Context): Promise<DevFaucetResultType> {
    return ctx.services.devFaucet.fund(input);
  }
}
