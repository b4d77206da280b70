import { Arg, Authorized, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { LedgerBalanceType } from './ledger.types';
import type { WalletBalance } from './wallet-balances';

@Resolver()
export class LedgerResolver {
  @Authorized('orderbook_order:read')
  @Query(() => [LedgerBalanceType], { description: "A wallet's trading balances in Keel's ledger" })
  walletBalances(@Arg('walletId', () => ID) walletId: string, @Ctx() ctx: GraphQLContext): Promise<WalletBalance[]> {
    return ctx.services.walletBalances.of(ctx.principal.organizationId, walletId);
  }
}
