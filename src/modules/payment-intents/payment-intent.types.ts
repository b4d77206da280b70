import { IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { Decimal, JSONObject } from '../../graphql-kit/types/scalars';
import { AssetRefType, ChainRefType, CheckoutTransferType } from '../checkout/checkout.types';
import { CheckoutStatus } from '../checkout';
import { PaymentIntentStatus } from './payment-intent.domain';
import type { CreatePaymentIntent, PaymentIntentFilter, PaymentIntentView } from './payment-intent.service';

registerEnumType(PaymentIntentStatus, {
  name: 'PaymentIntentStatus',
  description:
    'REQUIRES_PAYMENT → PROCESSING (detected or confirming) → SUCCEEDED | OVERPAID | UNDERPAID once confirmed; UNDERPAID → PROCESSING on a top-up before the expiry; REQUIRES_PAYMENT or PROCESSING (never recorded) → EXPIRED at the expiry, EXPIRED → PROCESSING when a payment mined before the expiry is recorded late; REQUIRES_PAYMENT or UNDERPAID → CANCELLED by the merchant; back to REQUIRES_PAYMENT (EXPIRED after the expiry) from PROCESSING when a reorg reverts its payment or the deposit seen at the head is AML_FLAGGED, and from SUCCEEDED, OVERPAID or UNDERPAID when a reorg deeper than the confirmations takes its payments back. Each transition emits payment_intent.<status in lower case>.',
});

@ObjectType('PaymentIntent')
export class PaymentIntentType implements PaymentIntentView {
  @Field(() => ID) id!: string;
  @Field(() => PaymentIntentStatus) status!: PaymentIntentStatus;
  @Field(() => CheckoutStatus, { description: 'The finer status of its checkout (DETECTED vs CONFIRMING)' }) checkoutStatus!: CheckoutStatus;
  @Field(() => ChainRefType) blockchain!: ChainRefType;
  @Field(() => AssetRefType) asset!: AssetRefType;
  @Field(() => ID) masterWalletId!: string;
  @Field({ description: 'The intent\'s own deposit address' }) depositAddress!: string;
  @Field() amount!: string;
  @Field() amountReceived!: string;
  @Field() amountConfirming!: string;
  @Field() amountDue!: string;
  @Field() amountOverpaid!: string;
  @Field(() => Int, { description: 'Deposits to the address that are not counted (another asset or chain, a sanctioned sender, late); see transfers' }) transfersNotCounted!: number;
  @Field({ description: 'The payment request: EIP-681 on EVM, a Solana Pay transfer request on Solana' }) paymentUri!: string;
  @Field() expiresAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When it was paid in full' }) paidAt!: Date | null;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => JSONObject) metadata!: Record<string, unknown>;
  @Field(() => String, { nullable: true }) cancellationReason!: string | null;
  @Field(() => [CheckoutTransferType], { description: 'Deposits to the address, oldest first' }) transfers!: CheckoutTransferType[];
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('PaymentIntentPage')
export class PaymentIntentPage extends Page(PaymentIntentType) {}

@InputType('CreatePaymentIntentInput')
export class CreatePaymentIntentInput implements CreatePaymentIntent {
  @Field(() => Decimal, { description: 'The exact amount, in the asset' }) amount!: string;
  @Field(() => ID) assetId!: string;
  @Field(() => ID, { nullable: true, description: "Optional; must be the asset's blockchain" }) @IsOptional() blockchainId?: string;
  @Field(() => ID, { description: 'The settlement wallet: the deposit address is derived under it and paid funds are swept to it' }) masterWalletId!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 1000) description?: string;
  @Field(() => JSONObject, { nullable: true }) @IsOptional() metadata?: Record<string, unknown>;
  @Field(() => Int, { nullable: true, description: 'Default CHECKOUT_TTL_SECONDS (900); 5 to 604800' }) @IsOptional() @Min(5) @Max(604_800) expiresInSeconds?: number;
}

@InputType('CancelPaymentIntentInput')
export class CancelPaymentIntentInput {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) reason?: string;
}

@ArgsType()
export class PaymentIntentListArgs extends PageArgs implements PaymentIntentFilter {
  @Field(() => PaymentIntentStatus, { nullable: true }) @IsOptional() status?: PaymentIntentStatus;
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() masterWalletId?: string;
}
