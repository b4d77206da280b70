import { IsOptional, Length } from 'class-validator';
import { ArgsType, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { Decimal } from '../../graphql-kit/types/scalars';
import type { SettlementBatchFilter, SettlementBatchView, SettlementTransitionView } from './settlement-batch.service';
import { BatchStatus } from './settlement-batch.domain';

/** The statuses of a settlement batch (a trade's settlementStatus follows its batch's). */

registerEnumType(BatchStatus, {
  name: 'SettlementBatchStatus',
  description:
    'BATCHED: trades gathered, not yet sent. SUBMITTED: the settlement transaction is sent (txHash). CONFIRMED: mined and as deep as the chain\'s confirmation count. FAILED: the batch would revert or reverted (failureReason); its trades were split into new batches, or the failing trade alone stays FAILED. REORGED: the block it was confirmed in, or its transaction reverted in (FAILED), left the canonical chain; it is submitted again (a failed batch whose trades went to its parts settles only by its own transaction: CONFIRMED with them, or FAILED again). REPLACED: its transaction was stuck below the market fee and is being re-sent with a higher fee, its nonce was taken, or it reverted because the contract\'s token slots changed under it (it is encoded again and sent at a new nonce; txHash null until then): transient.',
});

@ObjectType('SettlementBatchTransition', { description: 'One status change of a batch' })
export class SettlementTransitionType implements SettlementTransitionView {
  @Field(() => String, { nullable: true, description: 'Null when the batch was created' }) from!: string | null;
  @Field() to!: string;
  @Field(() => String, { nullable: true, description: 'The transaction in force after the change' }) txHash!: string | null;
  @Field(() => String, { nullable: true, description: 'Why: the revert reason, the replaced hash, the reorged block' }) detail!: string | null;
  @Field() at!: Date;
}

@ObjectType('SettlementBatch', { description: 'A batch of trades settled on chain in one transaction, netted per wallet and asset' })
export class SettlementBatchType implements SettlementBatchView {
  @Field(() => ID) id!: string;
  @Field(() => BatchStatus) status!: BatchStatus;
  @Field(() => ID) blockchainId!: string;
  @Field({ description: 'The EVM chain id' }) chainId!: string;
  @Field(() => [String], { description: 'Symbols of the markets whose trades the batch holds' }) markets!: string[];
  @Field(() => Int) tradeCount!: number;
  @Field(() => [ID], { description: 'The trades the batch was formed with' }) tradeIds!: string[];
  @Field(() => String, { nullable: true, description: 'The settlement transaction in force (null while BATCHED)' }) txHash!: string | null;
  @Field(() => [String], { description: 'Earlier transactions of the batch, replaced by a fee bump or re-submission' }) replacedTxHashes!: string[];
  @Field(() => String, { nullable: true }) blockNumber!: string | null;
  @Field(() => String, { nullable: true }) gasUsed!: string | null;
  @Field(() => Decimal, { nullable: true, description: "What the transaction paid: gas used × effective gas price, and on an OP-stack rollup its L1 data fee, in the chain's native coin" }) feePaid!: string | null;
  @Field(() => String, { nullable: true }) failureReason!: string | null;
  @Field(() => ID, { nullable: true, description: 'The failed batch this one was split from' }) parentBatchId!: string | null;
  @Field(() => Date, { nullable: true }) submittedAt!: Date | null;
  @Field(() => Date, { nullable: true }) confirmedAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
  @Field(() => [SettlementTransitionType], { description: 'Every status change, oldest first, with its time' }) transitions!: SettlementTransitionType[];
}

@ObjectType('SettlementBatchPage')
export class SettlementBatchPage extends Page(SettlementBatchType) {}

@ArgsType()
export class SettlementBatchListArgs extends PageArgs implements SettlementBatchFilter {
  @Field(() => BatchStatus, { nullable: true }) @IsOptional() status?: BatchStatus;
  @Field(() => String, { nullable: true, description: 'Market symbol, e.g. ETH-USDC' }) @IsOptional() @Length(1, 40) market?: string;
}

@ObjectType('SettlementBatchEvent', { description: 'A batch holding trades of the organisation changed status' })
export class SettlementBatchEventType {
  @Field(() => ID) batchId!: string;
  @Field(() => BatchStatus) status!: BatchStatus;
  @Field(() => String, { nullable: true }) previousStatus!: string | null;
  @Field(() => ID) blockchainId!: string;
  @Field(() => Int) tradeCount!: number;
  @Field(() => String, { nullable: true }) txHash!: string | null;
  @Field(() => String, { nullable: true }) blockNumber!: string | null;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field({ description: 'When the change was committed' }) timestamp!: string;
}
