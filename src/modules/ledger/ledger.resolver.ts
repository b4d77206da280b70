import { Arg, Authorized, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { LedgerBalanceType } from './ledger.types';
import type { WalletBalance } from './wallet-balances';
import type { LedgerServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type LedgerResolverServices = Pick<LedgerServices, 'walletBalances'>;
type Context = GraphQLContext<LedgerResolverServices>;

@Resolver()
export class LedgerResolver {
  @Authorized('orderbook_order:read')
  @Query(() => [LedgerBalanceType], { description: "A wallet's trading balances in Keel's ledger" })
  walletBalances(@Arg('walletId', () => ID) walletId: string, @Ctx() ctx: Context): Promise<WalletBalance[]> {
    return ctx.services.walletBalances.of(ctx.principal.organizationId, walletId);
  }
}
