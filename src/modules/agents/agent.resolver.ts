import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { PageArgs } from '../../graphql-kit/types/page';
import { AGENT_READ, KEY_ADMIN } from '../../platform/auth/permissions';
import {
  AgentListArgs,
  AgentPage,
  AgentPolicyType,
  AgentType,
  AgentWalletPage,
  AgentWalletType,
  CreateAgentInput,
  CreateAgentWalletInput,
  PolicyChangePage,
  PolicyInputType,
  UpdateAgentInput,
} from './agent.types';
import type { AgentsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type AgentResolverServices = Pick<AgentsServices, 'agentPolicies' | 'agentWallets' | 'agents'>;
type Context = GraphQLContext<AgentResolverServices>;

/**
 * Agents, their wallets and policies. Administration needs `admin` (and, where it issues the agent a
 * key, the API key itself: KEY_ADMIN); suspending and deleting, which only revoke the agent's key,
 * are an emergency brake an admin access token (a console) may pull. Reading needs `read`, or is
 * done by the agent's own key (`agent:read`), which sees its own agent only.
 */
@Resolver()
export class AgentResolver {
  @Authorized(KEY_ADMIN)
  @Mutation(() => AgentType, { description: "Creates an agent and its API key (scope 'agent'); the key is in this response only" })
  createAgent(@Arg('input') input: CreateAgentInput, @Ctx() ctx: Context): Promise<AgentType> {
    return ctx.services.agents.create(ctx.principal.organizationId, input);
  }

  @Authorized(AGENT_READ)
  @Query(() => AgentPage, { description: "The organisation's agents, newest first (an agent's key sees itself only)" })
  agents(@Args() args: AgentListArgs, @Ctx() ctx: Context): Promise<AgentPage> {
    return ctx.services.agents.list(ctx.principal, args);
  }

  @Authorized(AGENT_READ)
  @Query(() => AgentType)
  agent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AgentType> {
    return ctx.services.agents.get(ctx.principal, id);
  }

  @Authorized('admin')
  @Mutation(() => AgentType)
  updateAgent(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateAgentInput, @Ctx() ctx: Context): Promise<AgentType> {
    return ctx.services.agents.update(ctx.principal.organizationId, id, input);
  }

  @Authorized('admin')
  @Mutation(() => AgentType, { description: 'Suspends the agent: its key is revoked at once' })
  suspendAgent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AgentType> {
    return ctx.services.agents.suspend(ctx.principal.organizationId, id);
  }

  @Authorized(KEY_ADMIN)
  @Mutation(() => AgentType, { description: 'Reactivates a suspended agent with a new key, returned in this response only' })
  resumeAgent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AgentType> {
    return ctx.services.agents.resume(ctx.principal.organizationId, id);
  }

  @Authorized('admin')
  @Mutation(() => AgentType, { description: 'Deletes the agent: its key is revoked and its wallets deactivated; its payments stay on record' })
  deleteAgent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AgentType> {
    return ctx.services.agents.delete(ctx.principal.organizationId, id);
  }

  @Authorized('admin')
  @Mutation(() => AgentWalletType, { description: 'Derives a new address under a master wallet enabled on the chain and links it to the agent (organisation admins only)' })
  createAgentWallet(@Arg('agentId', () => ID) agentId: string, @Arg('input') input: CreateAgentWalletInput, @Ctx() ctx: Context): Promise<AgentWalletType> {
    return ctx.services.agentWallets.create(ctx.principal.organizationId, agentId, input);
  }

  @Authorized(AGENT_READ)
  @Query(() => AgentWalletPage, { description: "The agent's wallets, newest first" })
  agentWallets(@Arg('agentId', () => ID) agentId: string, @Args() args: PageArgs, @Ctx() ctx: Context): Promise<AgentWalletPage> {
    return ctx.services.agentWallets.list(ctx.principal, agentId, args);
  }

  @Authorized(AGENT_READ)
  @Query(() => AgentWalletType)
  agentWallet(@Arg('agentId', () => ID) agentId: string, @Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AgentWalletType> {
    return ctx.services.agentWallets.get(ctx.principal, agentId, id);
  }

  @Authorized(AGENT_READ)
  @Query(() => AgentPolicyType, { nullable: true, description: "The agent's spending policy; null when it has none (every payment is then denied)" })
  agentPolicy(@Arg('agentId', () => ID) agentId: string, @Ctx() ctx: Context): Promise<AgentPolicyType | null> {
    return ctx.services.agentPolicies.get(ctx.principal, agentId);
  }

  @Authorized('admin')
  @Mutation(() => AgentPolicyType, { description: "Replaces the agent's policy (admin only); every change is an audit row and an agent.policy_updated event" })
  setAgentPolicy(@Arg('agentId', () => ID) agentId: string, @Arg('input') input: PolicyInputType, @Ctx() ctx: Context): Promise<AgentPolicyType> {
    return ctx.services.agentPolicies.set(ctx.principal.organizationId, ctx.principal.apiKeyId, agentId, input);
  }

  @Authorized(AGENT_READ)
  @Query(() => PolicyChangePage, { description: "The audit trail of the agent's policy, newest first" })
  agentPolicyChanges(@Arg('agentId', () => ID) agentId: string, @Args() args: PageArgs, @Ctx() ctx: Context): Promise<PolicyChangePage> {
    return ctx.services.agentPolicies.changes(ctx.principal, agentId, args);
  }
}
