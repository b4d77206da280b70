import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { AGENT_READ, AGENT_SCOPE } from '../../platform/auth/permissions';
import { AgentPaymentListArgs, AgentPaymentPage, AgentPaymentType, RejectAgentPaymentInput, RequestAgentPaymentInput } from './agent.types';
import type { AgentsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type AgentPaymentResolverServices = Pick<AgentsServices, 'agentPayments'>;
type Context = GraphQLContext<AgentPaymentResolverServices>;

/** Agent payments: requested by the agent's own key, decided by its policy or, above a threshold, by an administrator. */
@Resolver()
export class AgentPaymentResolver {
  @Authorized(AGENT_SCOPE)
  @Mutation(() => AgentPaymentType, { description: "Requests a payment from one of the agent's wallets (the agent's own key only): POLICY_DENIED, PENDING approval, or APPROVED and sent" })
  requestAgentPayment(@Arg('agentId', () => ID) agentId: string, @Arg('input') input: RequestAgentPaymentInput, @Ctx() ctx: Context): Promise<AgentPaymentType> {
    return ctx.services.agentPayments.request(ctx.principal, agentId, input);
  }

  @Authorized(AGENT_READ)
  @Query(() => AgentPaymentPage, { description: "The agent's payments (agentWalletId, status, from, to, sort ASC|DESC by creation time, limit, offset)" })
  agentPayments(@Arg('agentId', () => ID) agentId: string, @Args() args: AgentPaymentListArgs, @Ctx() ctx: Context): Promise<AgentPaymentPage> {
    return ctx.services.agentPayments.list(ctx.principal, agentId, args);
  }

  @Authorized(AGENT_READ)
  @Query(() => AgentPaymentType)
  agentPayment(@Arg('agentId', () => ID) agentId: string, @Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AgentPaymentType> {
    return ctx.services.agentPayments.get(ctx.principal, agentId, id);
  }

  @Authorized('admin')
  @Mutation(() => AgentPaymentType, {
    description:
      "Approves a PENDING payment (admin only). The agent's policy as it is now is evaluated again, the recipient screened again, against what its window has let go by now (the approval meets the approval thresholds): allowed, the payment is sent (APPROVED); refused, it is POLICY_DENIED with the policy's denialReason. policyEvaluation.approval records the approval and that evaluation",
  })
  approveAgentPayment(@Arg('agentId', () => ID) agentId: string, @Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AgentPaymentType> {
    return ctx.services.agentPayments.approve(ctx.principal.organizationId, ctx.principal.apiKeyId, agentId, id);
  }

  @Authorized('admin')
  @Mutation(() => AgentPaymentType, { description: 'Rejects a PENDING payment (admin only): POLICY_DENIED with the rejection as denialReason' })
  rejectAgentPayment(
    @Arg('agentId', () => ID) agentId: string,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => RejectAgentPaymentInput, { nullable: true }) input: RejectAgentPaymentInput | undefined,
    @Ctx() ctx: Context,
  ): Promise<AgentPaymentType> {
    return ctx.services.agentPayments.reject(ctx.principal.organizationId, ctx.principal.apiKeyId, agentId, id, input?.reason);
  }
}
