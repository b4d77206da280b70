import { IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { JSONObject } from '../../graphql-kit/types/scalars';
import { MessageEncoding, SigningKind, SigningRisk, SigningStatus, type RiskFinding, type SignatureFilter, type SignatureView, type SignMessage, type SignTransaction, type SignTypedData } from './signing.domain';

registerEnumType(SigningKind, { name: 'SigningKind', description: 'EIP-191 personal_sign message, EIP-712 typed data, or an EIP-1559 transaction' });
registerEnumType(SigningStatus, { name: 'SigningStatus' });
registerEnumType(SigningRisk, { name: 'SigningRisk', description: 'A risk a signing request names to be signed: SPENDING_APPROVAL (a Permit, Permit2, an EIP-3009 transfer authorization, typed data carrying a call Keel cannot read, a message of 32 bytes that may be a digest, setApprovalForAll, an unlimited or large approve)' });
registerEnumType(MessageEncoding, { name: 'MessageEncoding' });

@InputType()
export class SignMessageInput implements SignMessage {
  @Field({ description: 'The message: UTF-8 text, or 0x-hex bytes with encoding HEX (at most 65,536 characters)' }) @Length(0, 65_536) message!: string;
  @Field(() => MessageEncoding, { nullable: true, defaultValue: MessageEncoding.UTF8 }) @IsOptional() encoding?: MessageEncoding | null;
  @Field(() => SigningRisk, { nullable: true, description: 'Required (with security.allowSpendingApprovals) to sign a message of exactly 32 bytes: it may be a digest (a Safe transaction\'s hash, which a Safe takes as its owner\'s approval), signed blind (DIGEST_SIGNATURE)' })
  @IsOptional()
  acknowledgeRisk?: SigningRisk | null;
}

@InputType()
export class SignTypedDataInput implements SignTypedData {
  @Field(() => JSONObject, { description: 'EIP-712 typed data as eth_signTypedData_v4 takes it: {domain, types, primaryType, message}' }) typedData!: Record<string, unknown>;
  @Field(() => SigningRisk, { nullable: true, description: 'Required (with security.allowSpendingApprovals) to sign typed data that grants spending power or carries a call Keel cannot read (a Safe transaction, a user operation)' })
  @IsOptional()
  acknowledgeRisk?: SigningRisk | null;
}

@InputType()
export class SignTransactionInput implements SignTransaction {
  @Field(() => ID, { description: 'One of the wallet\'s chains' }) @Length(1, 64) blockchainId!: string;
  @Field({ description: 'EVM address; mixed case must carry a valid checksum' }) @Length(1, 100) to!: string;
  @Field(() => String, { nullable: true, description: 'Wei, a whole number as a string; default "0"' }) @IsOptional() @Length(1, 80) value?: string | null;
  @Field(() => String, { nullable: true, description: 'Calldata, 0x-hex; default "0x"' }) @IsOptional() data?: string | null;
  @Field(() => Int, { nullable: true, description: 'Only without broadcast; default: the address\'s pending transaction count' }) @IsOptional() @Min(0) @Max(2 ** 31 - 1) nonce?: number | null;
  @Field(() => String, { nullable: true, description: 'Only without broadcast; default: estimated + 20%' }) @IsOptional() @Length(1, 80) gasLimit?: string | null;
  @Field(() => String, { nullable: true, description: "Only without broadcast; wei, at most 3 times the chain's current max fee per gas; default: the chain's" }) @IsOptional() @Length(1, 80) maxFeePerGas?: string | null;
  @Field(() => String, { nullable: true, description: "Only without broadcast; wei, at most maxFeePerGas; default: the chain's" }) @IsOptional() @Length(1, 80) maxPriorityFeePerGas?: string | null;
  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Send it through Keel\'s transaction sender (nonce, fees, fee bumps chosen by Keel)' }) @IsOptional() broadcast?: boolean | null;
  @Field(() => SigningRisk, { nullable: true, description: 'Required (with security.allowSpendingApprovals) to sign an approve, setApprovalForAll or Permit2 approve that grants spending power' })
  @IsOptional()
  acknowledgeRisk?: SigningRisk | null;
}

@ObjectType('Signature', { description: 'A signing request and its outcome, kept for audit' })
export class SignatureType implements SignatureView {
  @Field(() => ID) id!: string;
  @Field(() => SigningKind) kind!: SigningKind;
  @Field(() => SigningStatus) status!: SigningStatus;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => ID, { nullable: true, description: 'Null when the master wallet\'s own address signs' }) addressId!: string | null;
  @Field({ description: 'The address whose key signs' }) signer!: string;
  @Field(() => JSONObject, { description: 'What was asked to be signed, as given' }) request!: Record<string, unknown>;
  @Field(() => ID, { nullable: true }) blockchainId!: string | null;
  @Field() broadcast!: boolean;
  @Field(() => [String], { description: 'What the signature grants: PERMIT, PERMIT2, TRANSFER_AUTHORIZATION, CALL_AUTHORIZATION, DIGEST_SIGNATURE, SPENDER_FIELD, SET_APPROVAL_FOR_ALL, UNLIMITED_APPROVE, APPROVE_ABOVE_HOLDINGS' }) risks!: RiskFinding[];
  @Field(() => SigningRisk, { nullable: true }) acknowledgedRisk!: SigningRisk | null;
  @Field(() => String, { nullable: true, description: 'The signature (0x, 65 bytes), or the signed raw transaction; shown to admin keys only (null to a read key: whoever holds it can use it)' }) signature!: string | null;
  @Field(() => String, { nullable: true }) txHash!: string | null;
  @Field(() => ID, { nullable: true, description: 'The transfer (kind signing) that holds it for approval or sends it' }) transferId!: string | null;
  @Field(() => String, { nullable: true, description: 'Why it was refused, rejected or failed: an error code' }) errorCode!: string | null;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType()
export class SignaturePage extends Page(SignatureType) {}

@ArgsType()
export class SignatureFilterArgs extends PageArgs implements SignatureFilter {
  @Field(() => SigningStatus, { nullable: true }) @IsOptional() status?: SigningStatus | null;
  @Field(() => SigningKind, { nullable: true }) @IsOptional() kind?: SigningKind | null;
}
