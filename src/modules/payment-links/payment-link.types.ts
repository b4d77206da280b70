import { ArrayMaxSize, IsOptional, IsUrl, Length, Matches, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { Decimal, JSONObject } from '../../graphql-kit/types/scalars';
import { AssetType, BlockchainType } from '../chains/chain.types';
import { CheckoutTransferType, CheckoutType } from '../checkout/checkout.types';
import { CheckoutStatus, CheckoutTransferKind, CheckoutTransferStatus } from '../checkout';
import type { CreatePaymentLink, LinkCheckoutFilter, LinkTransferFilter, PaymentLinkCheckoutView, PaymentLinkFilter, PaymentLinkTransferView, PaymentLinkView, UpdatePaymentLink } from './payment-link.service';

const URL_OPTIONS = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };
const CURRENCY = /^[A-Za-z][A-Za-z0-9]{1,9}$/;
const PAYMENT_LIMIT =
  "How many payments the link takes; null: unlimited. An open session reserves none: a payment holds one from when it is recorded (the chain's confirmations) while it confirms, or while its underpaid session may be topped up, and consumes it once paid; a payment recorded when none is left is an OVER_LIMIT transfer (not counted, swept to the settlement wallet, refundable)";

@ObjectType('PaymentLink')
export class PaymentLinkType implements PaymentLinkView {
  @Field(() => ID) id!: string;
  @Field(() => ID, { description: 'A second identifier for the merchant\'s own references' }) refId!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field({ description: 'Unique across the deployment; the hosted page is /pay/{slug}' }) slug!: string;
  @Field({ description: 'Where the link is shared (free text, default api)' }) channel!: string;
  @Field({ description: 'The unit of amount; each allowed asset pays it at par (USD: USDC, USDT, DAI)' }) currency!: string;
  @Field(() => String, { nullable: true, description: 'null: an open amount the payer chooses' }) amount!: string | null;
  @Field(() => Int, { nullable: true, description: PAYMENT_LIMIT }) paymentLimit!: number | null;
  @Field(() => Int, { description: 'Checkouts paid in full so far (OVER_LIMIT and other uncounted transfers never count)' }) paymentsConsumed!: number;
  @Field(() => Date, { nullable: true }) expiresAt!: Date | null;
  @Field(() => ID, { description: 'The master wallet checkout addresses are derived under and swept to' }) evmSettlementWalletId!: string;
  @Field(() => String, { nullable: true, description: 'The master wallet on a Solana cluster that checkouts on that cluster are derived under (null: the link is paid on EVM chains only)' }) solanaSettlementWalletId!: string | null;
  @Field(() => [BlockchainType]) allowedBlockchains!: BlockchainType[];
  @Field(() => [AssetType]) allowedAssets!: AssetType[];
  @Field(() => String, { nullable: true, description: 'Where the hosted page sends the payer once paid' }) redirectUrl!: string | null;
  @Field(() => String, { nullable: true }) successMessage!: string | null;
  @Field(() => String, { nullable: true }) failureMessage!: string | null;
  @Field(() => JSONObject) metadata!: Record<string, unknown>;
  @Field(() => String, { nullable: true }) imgUrl!: string | null;
  @Field() isActive!: boolean;
  @Field({ description: 'The hosted checkout page' }) checkoutUrl!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('PaymentLinkPage')
export class PaymentLinkPage extends Page(PaymentLinkType) {}

@ObjectType('PaymentLinkTransfer', { description: 'A deposit to one of the link\'s checkout addresses' })
export class PaymentLinkTransferType extends CheckoutTransferType implements PaymentLinkTransferView {
  @Field(() => ID) paymentLinkId!: string;
  @Field(() => CheckoutStatus, { description: "The checkout's status now" }) checkoutStatus!: CheckoutStatus;
}

@ObjectType('PaymentLinkTransferPage')
export class PaymentLinkTransferPage extends Page(PaymentLinkTransferType) {}

@ObjectType('PaymentLinkCheckout', { description: 'One payer\'s session of a link' })
export class PaymentLinkCheckoutType extends CheckoutType implements PaymentLinkCheckoutView {
  @Field(() => ID) paymentLinkId!: string;
}

@ObjectType('PaymentLinkCheckoutPage')
export class PaymentLinkCheckoutPage extends Page(PaymentLinkCheckoutType) {}

@InputType('CreatePaymentLinkInput')
export class CreatePaymentLinkInput implements CreatePaymentLink {
  @Field() @Length(1, 200) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 2000) description?: string;
  @Field(() => String, { nullable: true, description: '3-64 of a-z, 0-9 and -, unique across the deployment (409 DUPLICATE_ENTRY); default: from the name' })
  @IsOptional()
  @Length(3, 64)
  slug?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 50) channel?: string;
  @Field({ description: 'e.g. USD or USDC' }) @Matches(CURRENCY, { message: 'must be 2-10 letters or digits, starting with a letter' }) currency!: string;
  @Field(() => Decimal, { nullable: true, description: 'Omit (or null) for an open amount the payer chooses' }) @IsOptional() amount?: string;
  @Field(() => Int, { nullable: true, description: PAYMENT_LIMIT }) @IsOptional() @Min(1) @Max(1_000_000) paymentLimit?: number;
  @Field(() => Date, { nullable: true }) @IsOptional() expiresAt?: Date;
  @Field(() => ID) evmSettlementWalletId!: string;
  @Field(() => String, { nullable: true, description: 'A master wallet on a Solana cluster: the link is paid on that cluster too (an EVM wallet: INVALID_NETWORK)' }) @IsOptional() solanaSettlementWalletId?: string;
  @Field(() => [String], { nullable: true, description: "Default: every chain the settlement wallet is enabled on" }) @IsOptional() @ArrayMaxSize(50) allowedBlockchainIds?: string[];
  @Field(() => [String], { nullable: true, description: 'Default: the assets of those chains that pay the currency at par' }) @IsOptional() @ArrayMaxSize(100) allowedAssetIds?: string[];
  @Field(() => String, { nullable: true }) @IsOptional() @IsUrl(URL_OPTIONS) @Length(1, 2048) redirectUrl?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) successMessage?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) failureMessage?: string;
  @Field(() => JSONObject, { nullable: true }) @IsOptional() metadata?: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'An HTTPS image shown on the page' }) @IsOptional() @IsUrl({ protocols: ['https'], require_protocol: true }) @Length(1, 2048) imgUrl?: string;
}

@InputType('UpdatePaymentLinkInput')
export class UpdatePaymentLinkInput implements UpdatePaymentLink {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 200) name?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 2000) description?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(3, 64) slug?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 50) channel?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Matches(CURRENCY, { message: 'must be 2-10 letters or digits, starting with a letter' }) currency?: string;
  @Field(() => Decimal, { nullable: true, description: 'null makes the amount open' }) @IsOptional() amount?: string | null;
  @Field(() => Int, { nullable: true }) @IsOptional() @Min(1) @Max(1_000_000) paymentLimit?: number;
  @Field(() => Date, { nullable: true }) @IsOptional() expiresAt?: Date;
  @Field(() => ID, { nullable: true }) @IsOptional() evmSettlementWalletId?: string;
  @Field(() => String, { nullable: true, description: 'null takes the Solana wallet off the link' }) @IsOptional() solanaSettlementWalletId?: string;
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(50) allowedBlockchainIds?: string[];
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(100) allowedAssetIds?: string[];
  @Field(() => String, { nullable: true }) @IsOptional() @IsUrl(URL_OPTIONS) @Length(1, 2048) redirectUrl?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) successMessage?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) failureMessage?: string;
  @Field(() => JSONObject, { nullable: true }) @IsOptional() metadata?: Record<string, unknown>;
  @Field(() => String, { nullable: true }) @IsOptional() @IsUrl({ protocols: ['https'], require_protocol: true }) @Length(1, 2048) imgUrl?: string;
  @Field(() => Boolean, { nullable: true, description: 'false deactivates the link' }) @IsOptional() isActive?: boolean;
}

@ArgsType()
export class PaymentLinkListArgs extends PageArgs implements PaymentLinkFilter {
  @Field(() => Boolean, { nullable: true }) @IsOptional() isActive?: boolean;
  @Field(() => String, { nullable: true, description: 'The settlement master wallet' }) @IsOptional() @IsIdFilter() masterWalletId?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 10) currency?: string;
  @Field(() => String, { nullable: true, description: 'Part of the name or slug, case-insensitive' }) @IsOptional() @Length(1, 100) search?: string;
}

@ArgsType()
export class PaymentLinkTransferListArgs extends PageArgs implements LinkTransferFilter {
  @Field(() => CheckoutTransferKind, { nullable: true }) @IsOptional() kind?: CheckoutTransferKind;
  @Field(() => CheckoutTransferStatus, { nullable: true }) @IsOptional() status?: CheckoutTransferStatus;
}

@ArgsType()
export class PaymentLinkCheckoutListArgs extends PageArgs implements LinkCheckoutFilter {
  @Field(() => CheckoutStatus, { nullable: true }) @IsOptional() status?: CheckoutStatus;
}
