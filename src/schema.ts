import 'reflect-metadata';
import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema, NonEmptyArray, PubSub } from 'type-graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import type { Host } from './platform/auth/permissions';
import type { Services } from './services';
import { authChecker } from './graphql-kit/auth-checker';
import { validateArguments } from './graphql-kit/validate-arguments';
import { registerRootFieldGrants } from './graphql-kit/root-field-grants';
import { OrganizationResolver, type OrganizationResolverServices } from './modules/organizations/organization.resolver';
import { QuotaResolver, type QuotaResolverServices } from './modules/quotas/quota.resolver';
import { ApiKeyResolver, type ApiKeyResolverServices } from './modules/api-keys/api-key.resolver';
import { EngineStatusResolver, type EngineStatusResolverServices } from './modules/engine-status/engine-status.resolver';
import { WebhookResolver, type WebhookResolverServices } from './modules/webhooks/webhook.resolver';
import { ChainResolver, type ChainResolverServices } from './modules/chains/chain.resolver';
import { WalletResolver, type WalletResolverServices } from './modules/wallets/wallet.resolver';
import { MarketResolver, type MarketResolverServices } from './modules/markets/market.resolver';
import { OrderResolver, type OrderResolverServices } from './modules/orders/order.resolver';
import { ChainTransferResolver, type ChainTransferResolverServices } from './modules/deposits/chain-transfer.resolver';
import { TransferResolver, type TransferResolverServices } from './modules/withdrawals/transfer.resolver';
import { SigningResolver, type SigningResolverServices } from './modules/signing/signing.resolver';
import { MarketDataResolver, type MarketDataResolverServices } from './modules/market-data/market-data.resolver';
import { LedgerResolver, type LedgerResolverServices } from './modules/ledger/ledger.resolver';
import { DevFaucetResolver, type DevFaucetResolverServices } from './modules/dev-faucet/dev-faucet.resolver';
import { AmlResolver, type AmlResolverServices } from './modules/aml/aml.resolver';
import { PriceResolver, type PriceResolverServices } from './modules/prices/price.resolver';
import { AgentResolver, type AgentResolverServices } from './modules/agents/agent.resolver';
import { AgentPaymentResolver, type AgentPaymentResolverServices } from './modules/agents/agent-payment.resolver';
import { PaymentLinkResolver, type PaymentLinkResolverServices } from './modules/payment-links/payment-link.resolver';
import { PaymentIntentResolver, type PaymentIntentResolverServices } from './modules/payment-intents/payment-intent.resolver';
import { SwapResolver, type SwapResolverServices } from './modules/swaps/swap.resolver';
import { SettlementRuleResolver, type SettlementRuleResolverServices } from './modules/settlement-rules/settlement-rule.resolver';
import { RealtimeResolver, type RealtimeResolverServices } from './modules/realtime/realtime.resolver';
import { SettlementBatchResolver, type SettlementBatchResolverServices } from './modules/settlement/settlement-batch.resolver';
import { TradingResolver, type TradingResolverServices } from './modules/settlement/trading.resolver';
import { AccessTokenResolver, RealtimeAuthResolver, type AccessTokenResolverServices } from './modules/access-tokens/access-token.resolver';

/** Which resolvers each host serves. A module adds its resolver to the host(s) it belongs to. */
export const HOST_RESOLVERS: Record<Host, NonEmptyArray<Function>> = {
  core: [OrganizationResolver, QuotaResolver, ApiKeyResolver, WebhookResolver, ChainResolver, WalletResolver, ChainTransferResolver, TransferResolver, SigningResolver, DevFaucetResolver, AmlResolver, PriceResolver, AgentResolver, AgentPaymentResolver, PaymentLinkResolver, PaymentIntentResolver, SwapResolver, SettlementRuleResolver, AccessTokenResolver],
  pro: [EngineStatusResolver, MarketResolver, OrderResolver, MarketDataResolver, LedgerResolver, RealtimeResolver, SettlementBatchResolver, TradingResolver, AccessTokenResolver, RealtimeAuthResolver],
};

/** The services the resolvers use, each resolver's own list: a module adds its resolver's here, one line. */
export type ResolverServices = AccessTokenResolverServices
  & AgentPaymentResolverServices
  & AgentResolverServices
  & AmlResolverServices
  & ApiKeyResolverServices
  & ChainResolverServices
  & ChainTransferResolverServices
  & DevFaucetResolverServices
  & EngineStatusResolverServices
  & LedgerResolverServices
  & MarketDataResolverServices
  & MarketResolverServices
  & OrderResolverServices
  & OrganizationResolverServices
  & PaymentIntentResolverServices
  & PaymentLinkResolverServices
  & PriceResolverServices
  & QuotaResolverServices
  & RealtimeResolverServices
  & SettlementRuleResolverServices
  & SettlementBatchResolverServices
  & TradingResolverServices
  & SwapResolverServices
  & WalletResolverServices
  & WebhookResolverServices
  & TransferResolverServices
  & SigningResolverServices;

/**
 * What the resolvers are handed in their context. Services must provide every resolver's list: a
 * resolver that names a service no module wires (or wires with another type) fails to compile here.
 */
export function resolverServices(services: Services): ResolverServices {
  return services;
}

/**
 * `pubSub` carries live events to subscriptions; the schema printer and tests that need no
 * realtime feed get an in-process one. `checked`: type-graphql runs the introspection query against
 * the new schema to find what graphql-js refuses; a serving node skips it (about a third of a second
 * of its start, on a schema built from the same code the SDL tests and `npm run schema` build checked).
 */
export async function buildHostSchema(host: Host, pubSub: PubSub = createPubSub(), { checked = true }: { checked?: boolean } = {}): Promise<GraphQLSchema> {
  const schema = await buildSchema({
    pubSub,
    resolvers: HOST_RESOLVERS[host],
    authChecker,
    authMode: 'error',
    validateFn: validateArguments,
    skipCheck: !checked,
  });
  registerRootFieldGrants(schema, HOST_RESOLVERS[host]);
  return schema;
}

/** The SDL written to schema/<file>.graphql by `npm run schema`. */
export const SCHEMA_FILES: Record<Host, string> = { core: 'core.graphql', pro: 'orderbook.graphql' };

export function printHostSchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
