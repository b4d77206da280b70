import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { PageArgs } from '../../graphql-kit/types/page';
import {
  SettlementExecutionPage,
  SettlementRuleCreateInput,
  SettlementRuleDeletionType,
  SettlementRuleFilterArgs,
  SettlementRulePage,
  SettlementRuleType,
  SettlementRuleUpdateInput,
} from './settlement-rule.types';
import type { SettlementRulesServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type SettlementRuleResolverServices = Pick<SettlementRulesServices, 'settlementRules'>;
type Context = GraphQLContext<SettlementRuleResolverServices>;

@Resolver()
export class SettlementRuleResolver {
  // A rule is a standing instruction that moves every matching deposit, as a wallet's autoSweep is:
  // installing or changing one needs admin, as autoSweep does; stopping one (deactivate, delete) write.
  @Authorized('admin')
  @Mutation(() => SettlementRuleType, { description: 'Creates a settlement rule on a master wallet or a deposit address (admin scope)' })
  createSettlementRule(@Arg('input') input: SettlementRuleCreateInput, @Ctx() ctx: Context): Promise<SettlementRuleType> {
    return ctx.services.settlementRules.create(ctx.principal.organizationId, input);
  }

  @Authorized('admin')
  @Mutation(() => SettlementRuleType, { description: 'Changes a rule; source and destination are replaced as a whole (admin scope)' })
  updateSettlementRule(@Arg('id', () => ID) id: string, @Arg('input') input: SettlementRuleUpdateInput, @Ctx() ctx: Context): Promise<SettlementRuleType> {
    return ctx.services.settlementRules.update(ctx.principal.organizationId, id, input);
  }

  @Authorized('admin')
  @Mutation(() => SettlementRuleType, { description: 'Matches deposits again (admin scope)' })
  activateSettlementRule(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<SettlementRuleType> {
    return ctx.services.settlementRules.setActive(ctx.principal.organizationId, id, true);
  }

  @Authorized('write')
  @Mutation(() => SettlementRuleType, { description: 'Deposits confirmed from now on are not matched; executions not yet run are cancelled when they come due' })
  deactivateSettlementRule(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<SettlementRuleType> {
    return ctx.services.settlementRules.setActive(ctx.principal.organizationId, id, false);
  }

  @Authorized('write')
  @Mutation(() => SettlementRuleDeletionType, { description: 'Deletes a rule; its pending executions are cancelled, its history stays readable' })
  deleteSettlementRule(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<SettlementRuleDeletionType> {
    return ctx.services.settlementRules.delete(ctx.principal.organizationId, id);
  }

  @Authorized('read')
  @Query(() => SettlementRulePage, { description: 'Settlement rules, newest first' })
  settlementRules(@Args() args: SettlementRuleFilterArgs, @Ctx() ctx: Context): Promise<SettlementRulePage> {
    return ctx.services.settlementRules.list(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => SettlementRuleType)
  settlementRule(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<SettlementRuleType> {
    return ctx.services.settlementRules.get(ctx.principal.organizationId, id);
  }

  @Authorized('read')
  @Query(() => SettlementRulePage, { description: "A master wallet's rules (deposits to its own address)" })
  masterWalletSettlementRules(@Arg('masterId', () => ID) masterId: string, @Args() args: PageArgs, @Ctx() ctx: Context): Promise<SettlementRulePage> {
    return ctx.services.settlementRules.listOfMasterWallet(ctx.principal.organizationId, masterId, args);
  }

  @Authorized('read')
  @Query(() => SettlementRulePage, { description: "A deposit address's rules" })
  addressSettlementRules(@Arg('addressId', () => ID) addressId: string, @Args() args: PageArgs, @Ctx() ctx: Context): Promise<SettlementRulePage> {
    return ctx.services.settlementRules.listOfAddress(ctx.principal.organizationId, addressId, args);
  }

  @Authorized('read')
  @Query(() => SettlementExecutionPage, { description: "A rule's executions, one per deposit it matched, newest first" })
  settlementRuleExecutions(@Arg('ruleId', () => ID) ruleId: string, @Args() args: PageArgs, @Ctx() ctx: Context): Promise<SettlementExecutionPage> {
    return ctx.services.settlementRules.executions(ctx.principal.organizationId, ruleId, args);
  }
}
