import { IsOptional, Length } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { JSONObject } from '../../graphql-kit/types/scalars';
import { AssetType, BlockchainType } from '../chains/chain.types';
import type {
  AddressFilter,
  AddressView,
  CreateAddress,
  RecoverableAssetsQuery,
  RecoverableAssetsView,
  RecoverableTokenView,
  UpdateAddress,
} from './address.service';
import type {
  AssetBalanceView,
  CreateMasterWallet,
  MasterWalletAnalytics,
  MasterWalletConfigurations,
  MasterWalletFilter,
  MasterWalletView,
  MasterWalletWithMessage,
  UpdateMasterWallet,
  WalletMonitoring,
} from './master-wallet.service';

@ObjectType('MasterWalletAnalytics')
export class MasterWalletAnalyticsType implements MasterWalletAnalytics {
  @Field(() => Int) addressesCount!: number;
  @Field(() => Int) autoSettlementRulesCount!: number;
  @Field(() => Int) paymentLinksCount!: number;
}

@ObjectType('WalletMonitoring')
export class WalletMonitoringType implements WalletMonitoring {
  @Field(() => ID) blockchainId!: string;
  @Field({ description: 'Whether Keel watches the wallet and its addresses for deposits on this chain' }) enabled!: boolean;
}

@ObjectType('MasterWallet')
export class MasterWalletType implements MasterWalletView {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field({ description: 'Address 0 of the HD wallet (m/44\'/60\'/0\'/0/0); the same on every EVM chain' }) walletAddress!: string;
  @Field() network!: string;
  @Field(() => BlockchainType, { description: 'The chain the wallet was created on' }) blockchain!: BlockchainType;
  @Field(() => ID) blockchainId!: string;
  @Field(() => JSONObject, { description: 'aml, enableGaslessWithdraw, enableMultiChain, autoSweep, security, monitoring' })
  configurations!: MasterWalletConfigurations;
  @Field(() => JSONObject) metadata!: Record<string, unknown>;
  @Field(() => MasterWalletAnalyticsType) analytics!: MasterWalletAnalyticsType;
  @Field() isActive!: boolean;
  @Field(() => [BlockchainType]) enabledBlockchains!: BlockchainType[];
  @Field(() => [WalletMonitoringType]) monitoring!: WalletMonitoringType[];
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('MasterWalletPage')
export class MasterWalletPage extends Page(MasterWalletType) {}

@ObjectType('MasterWalletWithMessage')
export class MasterWalletWithMessageType implements MasterWalletWithMessage {
  @Field(() => MasterWalletType) data!: MasterWalletType;
  @Field() message!: string;
}

@ArgsType()
export class MasterWalletListArgs extends PageArgs implements MasterWalletFilter {
  @Field(() => Boolean, { nullable: true }) @IsOptional() isActive?: boolean;
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() blockchainId?: string;
}

@InputType('CreateMasterWalletInput')
export class CreateMasterWalletInput implements CreateMasterWallet {
  @Field() blockchainId!: string;
  @Field() @Length(1, 200) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 1000) description?: string;
  @Field(() => JSONObject, { nullable: true }) @IsOptional() metadata?: Record<string, unknown>;
  @Field(() => JSONObject, { nullable: true, description: 'Any subset of the configurations; the rest take defaults. security and autoSweep need the admin scope; autoSweep.destinationAddress must be the wallet or one of security.allowedRecipients' })
  @IsOptional()
  configurations?: Record<string, unknown>;
}

@InputType('UpdateMasterWalletInput')
export class UpdateMasterWalletInput implements UpdateMasterWallet {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 200) name?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 1000) description?: string;
  @Field(() => JSONObject, { nullable: true, description: 'Replaces the metadata' }) @IsOptional() metadata?: Record<string, unknown>;
  @Field(() => JSONObject, { nullable: true, description: 'Merged over the current configurations, one level deep. security and autoSweep need the admin scope' })
  @IsOptional()
  configurations?: Record<string, unknown>;
  @Field(() => Boolean, { nullable: true }) @IsOptional() isActive?: boolean;
}

@ObjectType('AssetBalance')
export class AssetBalanceType implements AssetBalanceView {
  @Field(() => AssetType) asset!: AssetType;
  @Field(() => ID) blockchainId!: string;
  @Field({ description: 'In whole units, e.g. "12.5"' }) balance!: string;
  @Field({ description: 'In the smallest unit' }) rawBalance!: string;
}

@ArgsType()
export class BalanceArgs {
  @Field(() => String, { nullable: true, description: 'One chain; default every enabled chain' }) @IsOptional() @IsIdFilter() blockchainId?: string;
}

@ObjectType('Address')
export class AddressType implements AddressView {
  @Field(() => ID) id!: string;
  @Field() address!: string;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => Int, { description: "i in m/44'/60'/0'/0/i (Solana: m/44'/501'/i'/0'); never reused" }) derivationIndex!: number;
  @Field(() => JSONObject) metadata!: Record<string, unknown>;
  @Field() isActive!: boolean;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('AddressPage')
export class AddressPage extends Page(AddressType) {}

@ArgsType()
export class AddressListArgs extends PageArgs implements AddressFilter {
  @Field(() => Boolean, { nullable: true }) @IsOptional() isActive?: boolean;
}

@InputType('CreateAddressInput')
export class CreateAddressInput implements CreateAddress {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 200) name?: string;
  @Field(() => JSONObject, { nullable: true }) @IsOptional() metadata?: Record<string, unknown>;
}

@InputType('UpdateAddressInput')
export class UpdateAddressInput implements UpdateAddress {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 200) name?: string;
  @Field(() => JSONObject, { nullable: true }) @IsOptional() metadata?: Record<string, unknown>;
  @Field(() => Boolean, { nullable: true, description: 'false deactivates: Keel stops watching the address' }) @IsOptional() isActive?: boolean;
}

@ObjectType('RecoverableToken')
export class RecoverableTokenType implements RecoverableTokenView {
  @Field() address!: string;
  @Field() symbol!: string;
  @Field() balance!: string;
  @Field() name!: string;
  @Field() logoUrl!: string;
  @Field(() => Int) decimals!: number;
}

@ObjectType('RecoverableAssets')
export class RecoverableAssetsType implements RecoverableAssetsView {
  @Field({ description: 'Native balance in whole units' }) native!: string;
  @Field(() => [RecoverableTokenType]) tokens!: RecoverableTokenType[];
}

@ArgsType()
export class RecoverableAssetsArgs implements RecoverableAssetsQuery {
  @Field() blockchainId!: string;
  @Field(() => String, { nullable: true, description: 'Read through this JSON-RPC URL instead of the configured one (it must serve the same chain: EVM chain id, Solana genesis hash): public addresses only, checked again at connect time; redirects are not followed; each request gets 5 s and 1 MiB' })
  @IsOptional()
  @Length(1, 2048)
  rpcUrl?: string;
  @Field(() => String, { nullable: true, description: 'Comma-separated token contracts (Solana: mints); default the registered tokens of the chain (Solana: and every mint the address holds a token account of)' })
  @IsOptional()
  @Length(1, 10_000)
  tokenAddresses?: string;
}
