import { Field, ID, ObjectType } from 'type-graphql';
import { Decimal } from '../../graphql-kit/types/scalars';
import type { WalletBalance } from './wallet-balances';

@ObjectType('LedgerBalance', { description: "A wallet's trading balance of one asset in Keel's ledger" })
export class LedgerBalanceType implements WalletBalance {
  @Field(() => ID) walletId!: string;
  @Field(() => ID) assetId!: string;
  @Field() symbol!: string;
  @Field(() => Decimal, { description: 'What orders and withdrawals may take now: "0" while a debt stands in the asset' }) available!: string;
  @Field(() => Decimal, { description: 'Held by open orders' }) locked!: string;
  @Field(() => Decimal, { description: 'Owed after a chain reorg took back a deposit already spent or locked; while above zero nothing of the asset can be withdrawn or locked by a new order, and deposits repay it first' }) debt!: string;
}
