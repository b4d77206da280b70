import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import type { PageResult } from '../../platform/paging';
import type { TradingBalanceView, TradingTransferView } from './trading.service';
import { TradingBalanceType, TradingDepositInputType, TradingTransferListArgs, TradingTransferPage, TradingTransferType, TradingWithdrawalInputType } from './trading.types';
import type { SettlementServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type TradingResolverServices = Pick<SettlementServices, 'trading'>;
type Context = GraphQLContext<TradingResolverServices>;

@Resolver()
export class TradingResolver {
  @Authorized('orderbook_funds:move')
  @Mutation(() => TradingTransferType, { description: "Deposits from the wallet's address into its trading balance in the settlement contract; tradable once CONFIRMED. Refused with TRADING_EXIT_REQUESTED once the wallet has asked to exit the chain's settlement contract" })
  depositToTrading(@Arg('walletId', () => ID) walletId: string, @Arg('input') input: TradingDepositInputType, @Ctx() ctx: Context): Promise<TradingTransferView> {
    return ctx.services.trading.deposit(ctx.principal.organizationId, walletId, input);
  }

  @Authorized('orderbook_funds:move')
  @Mutation(() => TradingTransferType, { description: "Withdraws from the wallet's trading balance to its own address or, within its security policy, another one; paid out by the operator" })
  withdrawFromTrading(@Arg('walletId', () => ID) walletId: string, @Arg('input') input: TradingWithdrawalInputType, @Ctx() ctx: Context): Promise<TradingTransferView> {
    return ctx.services.trading.withdraw(ctx.principal.organizationId, ctx.principal.apiKeyId, walletId, input);
  }

  @Authorized('orderbook_funds:approve')
  @Mutation(() => TradingTransferType, { description: 'Releases a withdrawal from trading held by requireApprovalForTransfers (never by the key that asked for it: 403, another approver must release it)' })
  approveTradingWithdrawal(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<TradingTransferView> {
    return ctx.services.trading.decideWithdrawal(ctx.principal.organizationId, ctx.principal.apiKeyId, id, true);
  }

  @Authorized('orderbook_funds:approve')
  @Mutation(() => TradingTransferType, { description: 'Refuses a withdrawal from trading held for approval: the amount goes back to the trading balance (the key that asked for it may withdraw it so)' })
  rejectTradingWithdrawal(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<TradingTransferView> {
    return ctx.services.trading.decideWithdrawal(ctx.principal.organizationId, ctx.principal.apiKeyId, id, false);
  }

  @Authorized('orderbook_order:read')
  @Query(() => [TradingBalanceType], { description: "A wallet's trading balance per asset: available (what orders and withdrawals may take), debt, locked in orders, pending deposit, pending withdrawal, unsettled proceeds" })
  tradingBalances(@Arg('walletId', () => ID) walletId: string, @Ctx() ctx: Context): Promise<TradingBalanceView[]> {
    return ctx.services.trading.balances(ctx.principal.organizationId, walletId);
  }

  @Authorized('orderbook_order:read')
  @Query(() => TradingTransferPage, { description: 'Deposits to and withdrawals from trading, newest first (walletId, direction, status)' })
  tradingTransfers(@Args() args: TradingTransferListArgs, @Ctx() ctx: Context): Promise<PageResult<TradingTransferView>> {
    return ctx.services.trading.list(ctx.principal.organizationId, args);
  }

  @Authorized('orderbook_order:read')
  @Query(() => TradingTransferType)
  tradingTransfer(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<TradingTransferView> {
    return ctx.services.trading.get(ctx.principal.organizationId, id);
  }
}
