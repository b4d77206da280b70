import 'reflect-metadata';
import { Config } from './platform/config';
import { openPlatform, Platform } from './platform/platform';
import { createServices, Services } from './services';
import { buildHostSchema } from './graphql/schema';
import { createHost, listen, RunningHost } from './server/host';
import { coreRoutes } from '../rest-compat/routes/core';
import { orderbookRoutes } from '../rest-compat/routes/orderbook';
import type { Logger } from './platform/logger';
import { RunningDelivery, startWebhookDelivery } from './modules/webhooks/webhook-delivery';
import { ChainNetworks } from './modules/chains/chain-networks';
import { DepositWatcher, startDepositWatchers } from './modules/deposits/deposit-watcher';
import { ChainResetReconciler } from './modules/deposits/chain-reset';
import { TransactionSender } from './modules/withdrawals/transaction-sender';
import { startPollingLoop } from './platform/polling-loop';

export type Role = 'api' | 'orderbook' | 'worker';

export interface Keel {
  platform: Platform;
  services: Services;
  core?: RunningHost;
  pro?: RunningHost;
  webhookDelivery?: RunningDelivery;
  depositWatchers?: { stop(): Promise<void> };
  transactionSender?: { stop(): Promise<void> };
  idempotencyPurge?: { stop(): Promise<void> };
  stop(): Promise<void>;
}

export function parseRoles(text: string): Set<Role> {
  const roles = new Set<Role>();
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (part !== 'api' && part !== 'orderbook' && part !== 'worker') throw new Error(`Unknown role '${part}' (expected api, orderbook, worker)`);
    roles.add(part);
  }
  return roles;
}

/** Starts the roles asked for: the core host (api), the pro host (orderbook) and background work (worker). */
export async function startKeel(config: Config, logger?: Logger): Promise<Keel> {
  const roles = parseRoles(config.KEEL_ROLES);
  const platform = await openPlatform(config, logger);
  let networks: ChainNetworks;
  try {
    networks = await ChainNetworks.open(config, platform.db, platform.logger);
  } catch (e) {
    await platform.close();
    throw e;
  }
  const services = createServices(platform, networks);
  const keel: Keel = {
    platform,
    services,
    async stop() {
      await Promise.all([keel.core?.close(), keel.pro?.close()]);
      await services.markets.stopListening();
      await keel.webhookDelivery?.stop();
      await keel.depositWatchers?.stop();
      await keel.transactionSender?.stop();
      await keel.idempotencyPurge?.stop();
      await platform.close();
      await networks.close();
    },
  };
  try {
    await new ChainResetReconciler(platform.db, services.custodyLedgerSync, services.orders, platform.logger).reconcileAll(networks);
    if (roles.has('api')) {
      const app = await createHost({ host: 'core', schema: await buildHostSchema('core', platform.liveFeed.pubSub), routes: coreRoutes, platform, services, title: 'Keel core API' });
      keel.core = await listen(app, config.HOST, config.CORE_PORT);
    }
    if (roles.has('orderbook')) {
      const app = await createHost({ host: 'pro', schema: await buildHostSchema('pro', platform.liveFeed.pubSub), routes: orderbookRoutes, platform, services, title: 'Keel order-book API' });
      // Listening first: a market change made while the books load reloads them again.
      await services.markets.listenForChanges();
      // Books are rebuilt from PostgreSQL before the host takes orders, not on the first order.
      await services.orders.warmUp(await services.markets.ids());
      keel.pro = await listen(app, config.HOST, config.PRO_PORT);
    }
    if (roles.has('worker')) {
      keel.webhookDelivery = startWebhookDelivery(platform);
      const options = { pollIntervalMs: config.CHAIN_POLL_INTERVAL_MS, batchBlocks: config.CHAIN_SCAN_BATCH_BLOCKS, reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS };
      const sender = new TransactionSender(platform.db, platform.outbox, networks, services.chains, services.sendingWallets, { pollIntervalMs: config.TRANSFER_POLL_INTERVAL_MS, bumpAfterMs: config.TRANSFER_FEE_BUMP_AFTER_MS, bumpPercent: config.TRANSFER_FEE_BUMP_PERCENT }, platform.logger);
      sender.onOutcome(services.custodyLedgerSync);
      keel.transactionSender = sender.start();
      keel.idempotencyPurge = startPollingLoop(
        () => platform.idempotency.purgeExpired(),
        config.IDEMPOTENCY_PURGE_INTERVAL_MS,
        (e) => platform.logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'purging expired idempotency keys failed'),
      );
      keel.depositWatchers = startDepositWatchers(networks.all(), (n) => new DepositWatcher(n, services.chainActivity, services.chains, services.watchedWallets, options, platform.logger));
    }
  } catch (e) {
    await keel.stop();
    throw e;
  }
  return keel;
}
