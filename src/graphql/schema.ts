import 'reflect-metadata';
import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema, NonEmptyArray, PubSub } from 'type-graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import type { Host } from '../platform/auth/permissions';
import { authChecker } from './auth-checker';
import { validateArguments } from './validate-arguments';
import { registerRootFieldGrants } from './root-field-grants';
import { OrganizationResolver } from '../modules/organizations/organization.resolver';
import { ApiKeyResolver } from '../modules/api-keys/api-key.resolver';
import { EngineStatusResolver } from '../modules/engine-status/engine-status.resolver';
import { WebhookResolver } from '../modules/webhooks/webhook.resolver';
import { ChainResolver } from '../modules/chains/chain.resolver';
import { WalletResolver } from '../modules/wallets/wallet.resolver';
import { MarketResolver } from '../modules/markets/market.resolver';
import { OrderResolver } from '../modules/orders/order.resolver';
import { ChainTransferResolver } from '../modules/deposits/chain-transfer.resolver';
import { TransferResolver } from '../modules/withdrawals/transfer.resolver';
import { MarketDataResolver } from '../modules/market-data/market-data.resolver';
import { LedgerResolver } from '../modules/ledger/ledger.resolver';
import { DevFaucetResolver } from '../modules/dev-faucet/dev-faucet.resolver';
import { SettlementBatchResolver } from '../modules/settlement/settlement-batch.resolver';

/** Which resolvers each host serves. A module adds its resolver to the host(s) it belongs to. */
export const HOST_RESOLVERS: Record<Host, NonEmptyArray<Function>> = {
  core: [OrganizationResolver, ApiKeyResolver, WebhookResolver, ChainResolver, WalletResolver, ChainTransferResolver, TransferResolver, DevFaucetResolver],
  pro: [EngineStatusResolver, MarketResolver, OrderResolver, MarketDataResolver, LedgerResolver, SettlementBatchResolver],
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
