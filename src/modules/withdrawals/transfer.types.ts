import { ArrayMaxSize, ArrayMinSize, IsOptional, Length, ValidateNested } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { AssetType, BlockchainType } from '../chains/chain.types';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import type { GasEstimateView, TransferFilter, TransferItemView, TransferLine, TransferView } from './transfer.domain';

@InputType()
export class TransferLineInput implements TransferLine {
  @Field() @Length(1, 64) assetId!: string;
  @Field({ description: 'An EVM address (mixed case must carry a valid checksum), or on a Solana cluster a Solana address (base58)' }) @Length(1, 100) recipient!: string;
  @Field({ description: 'Whole units, e.g. "12.5"; an NFT: how many tokens (ERC-721: "1")' }) @Length(1, 80) amount!: string;
  @Field(() => String, { nullable: true, description: 'An NFT collection (asset of standard ERC721 or ERC1155): the token id to send with safeTransferFrom' }) @IsOptional() @Length(1, 78) tokenId?: string;
}

@InputType()
export class TransferInput {
  @Field(() => [TransferLineInput]) @ArrayMinSize(1) @ArrayMaxSize(50) @ValidateNested({ each: true }) assets!: TransferLineInput[];
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 500) note?: string;
}

@InputType()
export class EstimateGasInput {
  @Field(() => [TransferLineInput]) @ArrayMinSize(1) @ArrayMaxSize(50) @ValidateNested({ each: true }) assets!: TransferLineInput[];
}

@ObjectType()
export class TransferItemType implements TransferItemView {
  @Field(() => ID) id!: string;
  @Field(() => Int) position!: number;
  @Field(() => AssetType) asset!: AssetType;
  @Field() recipient!: string;
  @Field({ description: 'Whole units' }) amount!: string;
  @Field({ description: 'Smallest unit' }) rawAmount!: string;
  @Field(() => String, { nullable: true, description: 'The NFT the line sends; null for a fungible line' }) tokenId!: string | null;
  @Field({ description: 'PENDING_APPROVAL, QUEUED, SIGNED, SUBMITTED, CONFIRMED, FAILED, REJECTED' }) status!: string;
  @Field(() => String, { nullable: true, description: 'The hash of the transaction now in force' }) txHash!: string | null;
  @Field(() => [String], { description: 'Earlier transactions with the same nonce, replaced by fee bumps or a cancellation' }) replacedTxHashes!: string[];
  @Field(() => [String], { description: 'Zero-value transactions to the sender signed at the line\'s nonce to cancel it (cancelTransfer); if one is mined, the line FAILED' }) cancelTxHashes!: string[];
  @Field(() => String, { nullable: true }) nonce!: string | null;
  @Field(() => String, { nullable: true, description: 'The block (on Solana, the slot) the line was mined in: shown once seen mined, while SUBMITTED lines wait for their confirmations; cleared if a reorg drops it' }) blockNumber!: string | null;
  @Field(() => String, { nullable: true, description: 'What the transaction paid: gas used × effective price, and on an OP-stack rollup its L1 data fee, in the native coin' }) gasFee!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Date, { nullable: true }) submittedAt!: Date | null;
}

@ObjectType({ description: 'A withdrawal, sweep or gas top-up: lines sent from one wallet address on one chain' })
export class TransferType implements TransferView {
  @Field(() => ID) id!: string;
  @Field({ description: 'withdrawal, sweep, gas_topup, swap, agent_payment, trading_deposit, or signing (a signing request held for approval or broadcast: docs/signing.md)' }) kind!: string;
  @Field({ description: 'PENDING_APPROVAL, QUEUED, SUBMITTED, CONFIRMED, FAILED (any line failed), REJECTED' }) status!: string;
  @Field(() => ID) masterWalletId!: string;
  @Field(() => ID, { nullable: true }) addressId!: string | null;
  @Field(() => ID) blockchainId!: string;
  @Field() fromAddress!: string;
  @Field(() => String, { nullable: true }) note!: string | null;
  @Field(() => [TransferItemType]) items!: TransferItemType[];
  @Field(() => ID, { nullable: true, description: 'The API key that asked for it (an access token counts as the key that issued it); null for what Keel arranged itself (sweeps, gas top-ups, settlement rules, agent payments). Held for approval, it may be rejected by this key but approved only by another admin key' }) requestedBy!: string | null;
  @Field(() => ID, { nullable: true, description: 'The API key that approved or rejected it' }) decidedBy!: string | null;
  @Field(() => Date, { nullable: true, description: 'When it was approved or rejected' }) decidedAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'When an administrator asked for it to be cancelled (cancelTransfer); null: never' }) cancelRequestedAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType()
export class TransferPage extends Page(TransferType) {}

@ArgsType()
export class TransferFilterArgs extends PageArgs implements TransferFilter {
  @Field(() => String, { nullable: true }) @IsOptional() status?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @IsIdFilter() masterWalletId?: string;
}

@ObjectType()
export class GasEstimateLineType {
  @Field() amount!: string;
  @Field(() => AssetType) asset!: AssetType;
  @Field(() => BlockchainType) blockchain!: BlockchainType;
  @Field() destinationAddress!: string;
}

@ObjectType()
export class EstimatedFeeType {
  @Field({ description: 'Most the lines may cost, in whole native coins (gas limit × max fee per gas)' }) amount!: string;
  @Field({ description: 'The same in the smallest unit (wei)' }) value!: string;
  @Field({ description: 'Gas limit of all lines together' }) callGasLimit!: string;
  @Field({ description: "Spelled as the spec spells it. Always \"0\": Keel's wallets are plain accounts, with no account-abstraction verification step" })
  verificationGasLimi!: string;
}

@ObjectType()
export class GasEstimateType implements GasEstimateView {
  @Field(() => [GasEstimateLineType]) assets!: GasEstimateLineType[];
  @Field(() => EstimatedFeeType) estimatedFee!: EstimatedFeeType;
}
