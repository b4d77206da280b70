import { IsOptional, Length } from 'class-validator';
import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { IsIdFilter } from '../../graphql-kit/types/id';
import { Page, PageArgs } from '../../graphql-kit/types/page';
import { AssetType } from '../chains/chain.types';
import type { TradingBalanceView, TradingDepositInput, TradingTransferFilter, TradingTransferView, TradingWithdrawalInput } from './trading.service';
import { TradingDirection, TradingTransferStatus } from './trading.domain';


registerEnumType(TradingDirection, { name: 'TradingDirection', description: "DEPOSIT: from the wallet's address into its trading balance in the settlement contract. WITHDRAWAL: out of the contract." });
registerEnumType(TradingTransferStatus, {
  name: 'TradingTransferStatus',
  description:
    "PENDING_APPROVAL: a withdrawal held by the wallet's requireApprovalForTransfers. PENDING: a deposit sent from the wallet, or a withdrawal waiting for the operator. SUBMITTED: the operator's payout transaction is sent. CONFIRMED: final on chain (a deposit is then tradable). FAILED: the chain refused it; the amount is back where it was taken from. REJECTED: an approver refused it.",
});

@InputType()
export class TradingDepositInputType implements TradingDepositInput {
  @Field() @Length(1, 64) assetId!: string;
  @Field({ description: 'Whole units, e.g. "12.5"' }) @Length(1, 80) amount!: string;
  @Field(() => String, { nullable: true, description: "Whole units of the chain's coin deposited to trading in the same transaction as the token (a trading transfer of its own, same transferId): one transaction instead of two" })
  @IsOptional()
  @Length(1, 80)
  coinAmount?: string | null;
  @Field(() => String, { nullable: true, description: "A wallet of the organisation (master wallet or deposit address) that pays the deposit's gas when the wallet holds too little of the chain's coin" })
  @IsOptional()
  @Length(1, 64)
  gasSponsorWalletId?: string | null;
}

@InputType()
export class TradingWithdrawalInputType implements TradingWithdrawalInput {
  @Field() @Length(1, 64) assetId!: string;
  @Field({ description: 'Whole units' }) @Length(1, 80) amount!: string;
  @Field(() => String, { nullable: true, description: "Where the contract pays out; the wallet's own address when absent. Another address must pass the wallet's security policy" })
  @IsOptional()
  @Length(1, 100)
  recipient?: string | null;
}

@ObjectType('TradingTransfer', { description: "A deposit to or withdrawal from a wallet's trading balance in the settlement contract" })
export class TradingTransferType implements TradingTransferView {
  @Field(() => ID) id!: string;
  @Field(() => TradingDirection) direction!: TradingDirection;
  @Field(() => TradingTransferStatus) status!: TradingTransferStatus;
  @Field(() => ID) walletId!: string;
  @Field() walletAddress!: string;
  @Field(() => ID) blockchainId!: string;
  @Field(() => AssetType) asset!: AssetType;
  @Field({ description: 'Whole units' }) amount!: string;
  @Field({ description: 'Smallest unit' }) rawAmount!: string;
  @Field({ description: 'DEPOSIT: the settlement contract. WITHDRAWAL: where it is paid out' }) recipient!: string;
  @Field(() => ID, { nullable: true, description: "DEPOSIT: the transfer (kind trading_deposit) whose lines call the contract from the wallet's address" }) transferId!: string | null;
  @Field(() => ID, { nullable: true }) gasSponsorWalletId!: string | null;
  @Field(() => String, { nullable: true, description: "The deposit's or the operator's payout transaction" }) txHash!: string | null;
  @Field(() => String, { nullable: true }) blockNumber!: string | null;
  @Field(() => String, { nullable: true }) failureReason!: string | null;
  @Field(() => ID, { nullable: true, description: 'WITHDRAWAL: the API key that asked for it (an access token counts as the key that issued it); null for a deposit. Held for approval, it may be rejected by this key but approved only by another key' }) requestedBy!: string | null;
  @Field(() => ID, { nullable: true, description: 'The API key that approved or rejected it' }) decidedBy!: string | null;
  @Field(() => Date, { nullable: true }) decidedAt!: Date | null;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

@ObjectType('TradingTransferPage')
export class TradingTransferPage extends Page(TradingTransferType) {}

@ArgsType()
export class TradingTransferListArgs extends PageArgs implements TradingTransferFilter {
  @Field(() => ID, { nullable: true }) @IsOptional() @IsIdFilter() walletId?: string;
  @Field(() => TradingDirection, { nullable: true }) @IsOptional() direction?: TradingDirection;
  @Field(() => TradingTransferStatus, { nullable: true }) @IsOptional() status?: TradingTransferStatus;
}

@ObjectType('TradingBalance', { description: "A wallet's trading balance of one asset, held in the settlement contract (whole units)" })
export class TradingBalanceType implements TradingBalanceView {
  @Field(() => ID) walletId!: string;
  @Field(() => ID) assetId!: string;
  @Field() symbol!: string;
  @Field({ description: 'What orders and withdrawals may take now: "0" while a debt stands in the asset' }) available!: string;
  @Field({ description: 'What the trading account owes in the asset, "0" when nothing: a deep reorg took back the refund of a reverted payout already spent or locked. While above zero nothing of the asset can be withdrawn or locked by a new order; the next credits to trading (a deposit, a refund) repay it first' }) debt!: string;
  @Field({ description: 'Held by open orders' }) locked!: string;
  @Field({ description: 'Deposits sent from the wallet, not yet confirmed (not tradable yet)' }) pendingDeposit!: string;
  @Field({ description: 'Withdrawals taken from the balance, not yet confirmed on chain' }) pendingWithdrawal!: string;
  @Field({ description: 'Proceeds of trades not yet CONFIRMED on chain (netted against what the wallet owes in trades still to settle; a failed trade\'s counted apart): in available, not withdrawable until settled' }) unsettledProceeds!: string;
}
