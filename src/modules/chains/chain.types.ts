import { IsOptional, Length } from 'class-validator';
import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { JSONObject } from '../../graphql-kit/types/scalars';
import type { AssetFilter, AssetView, BlockchainFilter, BlockchainView } from './chain.service';

@ObjectType('Blockchain')
export class BlockchainType implements BlockchainView {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() slug!: string;
  @Field({ description: 'The native coin' }) symbol!: string;
  @Field() isActive!: boolean;
  @Field() isEvmCompatible!: boolean;
  @Field(() => JSONObject, { nullable: true, description: 'confirmations (blocks before a deposit counts), explorerUrl; a Solana cluster: commitment (finalized, when a deposit counts)' })
  configurations!: Record<string, unknown> | null;
  @Field(() => Int, { nullable: true, description: 'The EVM chain id; null for a Solana cluster (network names it)' }) chainId!: number | null;
  @Field() logoUrl!: string;
  @Field() tokenStandard!: string;
  @Field({ description: 'mainnet, a testnet name, or devnet for Keel\'s sandbox chains' }) network!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('Asset')
export class AssetType implements AssetView {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() symbol!: string;
  @Field(() => Int) decimals!: number;
  @Field({ description: 'The token contract or Solana mint; for the native coin the zero address (Solana: 11111111111111111111111111111111)' }) address!: string;
  @Field({ description: 'ERC20, SPL, native, or an NFT standard' }) standard!: string;
  @Field() logoUrl!: string;
  @Field() isActive!: boolean;
  @Field() isNative!: boolean;
  @Field() network!: string;
  @Field(() => JSONObject, { nullable: true }) configurations!: Record<string, unknown> | null;
  @Field(() => BlockchainType) blockchain!: BlockchainType;
  @Field(() => ID) blockchainId!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('BlockchainPage')
export class BlockchainPage extends Page(BlockchainType) {}

@ObjectType('AssetPage')
export class AssetPage extends Page(AssetType) {}

@ArgsType()
export class BlockchainListArgs extends PageArgs implements BlockchainFilter {
  @Field(() => Boolean, { nullable: true }) @IsOptional() isActive?: boolean;
}

@ArgsType()
export class AssetListArgs extends PageArgs implements AssetFilter {
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() blockchainId?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 20) symbol?: string;
  @Field(() => Boolean, { nullable: true }) @IsOptional() isNative?: boolean;
}
