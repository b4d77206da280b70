import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { AssetRef, ChainRef, CheckoutTransferView, CheckoutView } from './checkout-desk';
import { CheckoutStatus, CheckoutTransferKind, CheckoutTransferStatus } from './checkout.domain';

registerEnumType(CheckoutStatus, {
  name: 'CheckoutStatus',
  description:
    'AWAITING_PAYMENT: nothing seen. DETECTED: the chain head shows funds at the address. CONFIRMING: a payment is recorded and gathering confirmations. PAID / OVERPAID / UNDERPAID: every counted payment is confirmed and the total equals / exceeds / falls short of the amount (UNDERPAID accepts a top-up until the expiry). EXPIRED: nothing counted arrived in time. CANCELLED: cancelled by the merchant (intents).',
});

registerEnumType(CheckoutTransferKind, {
  name: 'CheckoutTransferKind',
  description:
    "PAYMENT counts towards the amount; no other kind is counted, moves the status or consumes a link's payment. LATE: mined after the expiry (by block time), or recorded after a cancellation (even if mined before it). REPEAT: arrived after the checkout was paid. WRONG_ASSET: another asset on the checkout's chain. WRONG_CHAIN: sent to the address on another chain. AML_FLAGGED: the sender is on a sanctions list. OVER_LIMIT: the payment link had taken all its payments. Funds of every kind but AML_FLAGGED are swept to the settlement wallet for the merchant to refund; AML_FLAGGED funds stay held at the checkout address until an admin releases them.",
});

registerEnumType(CheckoutTransferStatus, {
  name: 'CheckoutTransferStatus',
  description: 'CONFIRMING: recorded, fewer than requiredConfirmations. CONFIRMED: has them (and counts, for a PAYMENT). REVERTED: a reorg took it back.',
});

@ObjectType('ChainRef')
export class ChainRefType implements ChainRef {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() slug!: string;
  @Field(() => Int, { nullable: true }) chainId!: number | null;
}

@ObjectType('AssetRef')
export class AssetRefType implements AssetRef {
  @Field(() => ID) id!: string;
  @Field() symbol!: string;
  @Field() name!: string;
  @Field(() => Int) decimals!: number;
  @Field({ description: 'The token contract; the zero address for the native coin' }) address!: string;
}

@ObjectType('Checkout', { description: 'One fresh deposit address awaiting an exact amount of one asset until an expiry' })
export class CheckoutType implements CheckoutView {
  @Field(() => ID) id!: string;
  @Field(() => CheckoutStatus) status!: CheckoutStatus;
  @Field(() => ChainRefType) blockchain!: ChainRefType;
  @Field(() => AssetRefType) asset!: AssetRefType;
  @Field({ description: 'Where to pay: derived under the settlement wallet, never reused' }) depositAddress!: string;
  @Field({ description: 'The exact amount expected, in the asset' }) amount!: string;
  @Field({ description: 'Counted and confirmed so far' }) amountReceived!: string;
  @Field({ description: 'Counted, still gathering confirmations' }) amountConfirming!: string;
  @Field({ description: 'Still missing (0 once paid)' }) amountDue!: string;
  @Field({ description: 'Received beyond the amount (OVERPAID)' }) amountOverpaid!: string;
  @Field(() => Int, { description: 'Deposits to the address that are not counted (another asset or chain, a sanctioned sender, late, repeated, over the limit); reverted ones aside' }) transfersNotCounted!: number;
  @Field({ description: 'The payment request (what the QR code encodes): EIP-681 on EVM, a Solana Pay transfer request on Solana' }) paymentUri!: string;
  @Field() expiresAt!: Date;
  @Field(() => Date, { nullable: true }) paidAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('CheckoutTransfer', { description: 'A deposit to a checkout address' })
export class CheckoutTransferType implements CheckoutTransferView {
  @Field(() => ID) id!: string;
  @Field(() => ID) checkoutId!: string;
  @Field(() => CheckoutTransferKind) kind!: CheckoutTransferKind;
  @Field(() => String, { nullable: true, description: 'Why it is not counted; null for a PAYMENT' }) notCountedReason!: string | null;
  @Field(() => CheckoutTransferStatus) status!: CheckoutTransferStatus;
  @Field() txHash!: string;
  @Field() from!: string;
  @Field({ description: 'The checkout address' }) to!: string;
  @Field({ description: 'Whole units of the asset that arrived' }) amount!: string;
  @Field({ description: 'Smallest unit of the asset that arrived' }) rawAmount!: string;
  @Field(() => AssetRefType, { description: "The asset that arrived (not the checkout's for WRONG_ASSET)" }) asset!: AssetRefType;
  @Field(() => ChainRefType, { description: "The chain it arrived on (not the checkout's for WRONG_CHAIN)" }) blockchain!: ChainRefType;
  @Field() blockNumber!: string;
  @Field(() => Int) confirmations!: number;
  @Field(() => Int, { description: "max(the chain's confirmations, PAYMENT_CONFIRMATIONS)" }) requiredConfirmations!: number;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}
