import 'reflect-metadata';
import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema, NonEmptyArray, PubSub } from 'type-graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import type { Host } from './platform/auth/permissions';
import { authChecker } from './graphql-kit/auth-checker';
import { validateArguments } from './graphql-kit/validate-arguments';
import { registerRootFieldGrants } from './graphql-kit/root-field-grants';
import { OrganizationResolver } from './modules/organizations/organization.resolver';
import { QuotaResolver } from './modules/quotas/quota.resolver';
import { ApiKeyResolver } from './modules/api-keys/api-key.resolver';
import { EngineStatusResolver } from './modules/engine-status/engine-status.resolver';
import { WebhookResolver } from './modules/webhooks/webhook.resolver';
import { ChainResolver } from './modules/chains/chain.resolver';
import { WalletResolver } from './modules/wallets/wallet.resolver';
import { MarketResolver } from './modules/markets/market.resolver';
import { OrderResolver } from './modules/orders/order.resolver';
import { ChainTransferResolver } from './modules/deposits/chain-transfer.resolver';
import { TransferResolver } from './modules/withdrawals/transfer.resolver';
import { SigningResolver } from './modules/signing/signing.resolver';
import { MarketDataResolver } from './modules/market-data/market-data.resolver';
import { LedgerResolver } from './modules/ledger/ledger.resolver';
import { DevFaucetResolver } from './modules/dev-faucet/dev-faucet.resolver';
import { AmlResolver } from './modules/aml/aml.resolver';
import { PriceResolver } from './modules/prices/price.resolver';
import { AgentResolver } from './modules/agents/agent.resolver';
import { AgentPaymentResolver } from './modules/agents/agent-payment.resolver';
import { PaymentLinkResolver } from './modules/payment-links/payment-link.resolver';
import { PaymentIntentResolver } from './modules/payment-intents/payment-intent.resolver';
import { SwapResolver } from './modules/swaps/swap.resolver';
import { SettlementRuleResolver } from './modules/settlement-rules/settlement-rule.resolver';
import { RealtimeResolver } from './modules/realtime/realtime.resolver';
import { SettlementBatchResolver } from './modules/settlement/settlement-batch.resolver';
import { TradingResolver } from './modules/settlement/trading.resolver';
import { AccessTokenResolver, RealtimeAuthResolver } from './modules/access-tokens/access-token.resolver';

/** Which resolvers each host serves. A module adds its resolver to the host(s) it belongs to. */
export const HOST_RESOLVERS: Record<Host, NonEmptyArray<Function>> = {
  core: [OrganizationResolver, QuotaResolver, ApiKeyResolver, WebhookResolver, ChainResolver, WalletResolver, ChainTransferResolver, TransferResolver, SigningResolver, DevFaucetResolver, AmlResolver, PriceResolver, AgentResolver, AgentPaymentResolver, PaymentLinkResolver, PaymentIntentResolver, SwapResolver, SettlementRuleResolver, AccessTokenResolver],
  pro: [EngineStatusResolver, MarketResolver, OrderResolver, MarketDataResolver, LedgerResolver, RealtimeResolver, SettlementBatchResolver, TradingResolver, AccessTokenResolver, RealtimeAuthResolver],
};

/**
 * `pubSub` carries live events to subscriptions; the schema printer and tests that need no
 * realtime feed get an in-process one.
 */
export async function buildHostSchema(host: Host, pubSub: PubSub = createPubSub()): Promise<GraphQLSchema> {
  const schema = await buildSchema({
    pubSub,
    resolvers: HOST_RESOLVERS[host],
    authChecker,
    authMode: 'error',
    validateFn: validateArguments,
  });
  registerRootFieldGrants(schema, HOST_RESOLVERS[host]);
  return schema;
}

/** The SDL written to schema/<file>.graphql by `npm run schema`. */
export const SCHEMA_FILES: Record<Host, string> = { core: 'core.graphql', pro: 'orderbook.graphql' };

export function printHostSchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
