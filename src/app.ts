import 'reflect-metadata';
import type { FastifyInstance } from 'fastify';
import { Config } from './platform/config';
import { percentBasisPoints } from './platform/decimal';
import { openPlatform, Platform, PlatformOptions } from './platform/platform';
import { createServices, Services } from './services';
import { buildHostSchema, resolverServices } from './schema';
import { createHost, listen, RunningHost } from './server/host';
import type { Logger } from './platform/logger';
import { WebhookDelivery } from './modules/webhooks/webhook-delivery';
import { DeliveryFanout } from './modules/webhooks/delivery-fanout';
import { ChainNetworks } from './modules/chains/chain-networks';
import { DepositWatcher, startDepositWatchers } from './modules/deposits/deposit-watcher';
import { ChainResetReconciler } from './modules/deposits/chain-reset';
import { TransactionSender } from './modules/withdrawals/transaction-sender';
import { OutboxRelay } from './platform/events/outbox-relay';
import { SwapOutcomes } from './modules/swaps/swap-outcomes';
import { SettlementExecutor } from './modules/settlement-rules/settlement-executor';
import { SettlementRuleWorker } from './modules/settlement-rules/settlement-rule-worker';
import { startPollingLoop } from './platform/polling-loop';
import { loopWorker, Worker, Workers } from './platform/worker';
import { SanctionsListWatcher } from './modules/aml/sanctions-list-watcher';
import { CheckoutWatcher } from './modules/checkout/checkout-watcher';
import { CheckoutAddressRetirement } from './modules/checkout/address-retirement';
import { registerCheckoutRoutes } from './modules/payment-links/checkout-routes';
import { CheckoutBudgets } from './modules/payment-links/checkout-budgets';
import { SettlementBatcher } from './modules/settlement/batcher';
import { SettlementWorker } from './modules/settlement/settlement-worker';
import { claimNodeIdentity, NodeIdentity, processNodeId } from './platform/node-identity';

export type Role = 'api' | 'orderbook' | 'worker';

export interface Keel {
  platform: Platform;
  services: Services;
  core?: RunningHost;
  pro?: RunningHost;
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

/**
 * Starts the roles asked for: the core host (api), the pro host (orderbook) and background work
 * (worker). This is the one place where each role's pieces are built, from the services.
 */
export async function startKeel(config: Config, logger?: Logger, options: PlatformOptions = {}): Promise<Keel> {
  const roles = parseRoles(config.KEEL_ROLES);
  const platform = await openPlatform(config, logger, options);
  const networks = new ChainNetworks({ config, db: platform.db, logger: platform.logger });
  try {
    await networks.start();
  } catch (e) {
    await platform.close();
    throw e;
  }
  // A node that leads shards holds a stable id (its restart takes its own leases back at once); others need none.
  let identity: NodeIdentity;
  try {
    identity = roles.has('orderbook') ? await claimNodeIdentity(config, platform.logger) : { id: processNodeId(), source: 'process', release: async () => undefined };
  } catch (e) {
    await networks.stop();
    await platform.close();
    throw e;
  }
  const services = createServices(platform, networks, identity.id);
  const workers = new Workers();
  const keel: Keel = {
    platform,
    services,
    async stop() {
      await Promise.all([keel.core?.close(), keel.pro?.close()]);
      await workers.stopAll();
      await services.walletKeys.close();
      await identity.release();
      await platform.close();
      await networks.stop();
    },
  };
  try {
    // Every role serves or moves money on the chains, so a reset is reconciled before any of them starts;
    // a reset chain's deposits are taken back through every deposit listener (the ledger, checkouts).
    await new ChainResetReconciler(platform.db, services.chainActivity.allListeners, services.orders, platform.logger, services.ledger, services.transfers).reconcileAll(networks);
    // Every role screens addresses in memory: each picks up a list loaded with `keel aml load`.
    await workers.start(new SanctionsListWatcher(services.sanctionsLists, services.sanctions, services.shippedSanctions, platform.config.SANCTIONS_REFRESH_INTERVAL_MS, platform.logger));
    if (roles.has('api')) keel.core = await startApiRole(platform, services);
    if (roles.has('orderbook')) keel.pro = await startOrderbookRole(platform, services, workers);
    if (roles.has('worker')) for (const worker of workerRole(platform, services, networks)) await workers.start(worker);
  } catch (e) {
    await keel.stop();
    throw e;
  }
  return keel;
}

async function startApiRole(platform: Platform, services: Services): Promise<RunningHost> {
  const { config } = platform;
  const budgets = new CheckoutBudgets(
    platform.redis,
    config.REDIS_PREFIX,
    {
      perClient: config.CHECKOUT_RATE_LIMIT_PER_MINUTE,
      sessionsPerLink: config.CHECKOUT_LINK_SESSIONS_PER_MINUTE,
      sessionsPerClientPerLink: config.CHECKOUT_CLIENT_LINK_SESSIONS_PER_MINUTE,
      sessionReadsPerClient: config.CHECKOUT_SESSION_READS_PER_MINUTE,
    },
    config.REDIS_COMMAND_TIMEOUT_MS,
  );
  const publicRoutes = { register: (app: FastifyInstance) => registerCheckoutRoutes(app, services.publicCheckout, budgets), budgets };
  const app = await createHost({ host: 'core', schema: await buildHostSchema('core', platform.liveFeed.pubSub, { checked: false }), platform, services: resolverServices(services), publicRoutes });
  return listen(app, platform.config.HOST, platform.config.CORE_PORT);
}

async function startOrderbookRole(platform: Platform, services: Services, workers: Workers): Promise<RunningHost> {
  const app = await createHost({ host: 'pro', schema: await buildHostSchema('pro', platform.liveFeed.pubSub, { checked: false }), platform, services: resolverServices(services) });
  // Listening first: a market change made while the books load reloads them again.
  await workers.start({ start: () => services.markets.listenForChanges(), stop: () => services.markets.stopListening() });
  // Subscribers on this node see every node's commits from their first subscription on.
  await services.realtime.listen();
  // Competes for the shards' leases; the books of the shards it takes are rebuilt from PostgreSQL
  // before their orders are taken (a lone node leads every shard before it listens).
  await workers.start({ start: () => services.shardLeadership.start(), stop: () => services.shardLeadership.stop() });
  return listen(app, platform.config.HOST, platform.config.PRO_PORT);
}

/** The worker role's background work, in start order (stopped in reverse). */
function workerRole(platform: Platform, services: Services, networks: ChainNetworks): Worker[] {
  const { config, db, logger } = platform;
  const sender = new TransactionSender(db, platform.outbox, networks, services.chains, services.sendingWallets, { pollIntervalMs: config.TRANSFER_POLL_INTERVAL_MS, bumpAfterMs: config.TRANSFER_FEE_BUMP_AFTER_MS, bumpPercent: config.TRANSFER_FEE_BUMP_PERCENT }, logger, platform.failpoints);
  // Outcome listeners (hooks run in the sender step's transaction, in this order; any error rolls the step back):
  // the ledger first, so a line's money (a failed line's refund, the gas it paid) is booked before the
  // listeners that react to what the line was for (an agent payment, a swap, a settlement rule's execution, a sweep),
  // each of which only touches its own kind of line.
  sender.onOutcome(services.custodyLedgerSync);
  sender.onOutcome(services.tradingDepositOutcomes);
  sender.onOutcome(services.agentPaymentOutcomes);
  sender.onOutcome(new SwapOutcomes(networks, services.chains, services.sendingWallets, platform.outbox, services.watchedWallets, services.custodyLedgerSync, logger));
  const { settlementOutcomes } = services;
  sender.onOutcome(settlementOutcomes);
  sender.onOutcome(services.signingOutcomes);
  sender.onOutcome(services.autoSweeper);
  const settlementExecutor = new SettlementExecutor(services.sendingWallets, services.chains, networks, services.transfers, services.swaps, services.destinationScreen, services.settlementContractGuard, services.gasTopUps, services.prices, percentBasisPoints(config.SETTLEMENT_RULES_MAX_PRICE_DEVIATION_PERCENT));
  const watchOptions = { pollIntervalMs: config.CHAIN_POLL_INTERVAL_MS, batchBlocks: config.CHAIN_SCAN_BATCH_BLOCKS, reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS };
  return [
    new WebhookDelivery(platform, services.deliveryScheduler, services.webhookGuard),
    // Committed events to webhook deliveries and to the live feed of GraphQL subscriptions.
    new OutboxRelay(
      db,
      [new DeliveryFanout(services.deliveryScheduler), platform.liveFeed.relayConsumer()],
      logger,
      { pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS, listeningPollIntervalMs: config.OUTBOX_LISTENING_POLL_INTERVAL_MS },
      platform.session,
    ),
    loopWorker(() => sender.start()),
    loopWorker(() => new SettlementRuleWorker(db, settlementExecutor, settlementOutcomes, { pollIntervalMs: config.SETTLEMENT_RULES_POLL_INTERVAL_MS }, logger).start()),
    loopWorker(() =>
      startPollingLoop(
        () => services.autoSweeper.retryDue(),
        config.SWEEP_RETRY_POLL_INTERVAL_MS,
        (e) => logger.warn({ err: e }, 'trying the sweeps due again failed'),
      ),
    ),
    loopWorker(() =>
      startPollingLoop(
        () => platform.idempotency.purgeExpired(),
        config.IDEMPOTENCY_PURGE_INTERVAL_MS,
        (e) => logger.warn({ err: e }, 'purging expired idempotency keys failed'),
      ),
    ),
    new CheckoutWatcher(db, services.checkouts, services.checkoutDeposits, networks, config.CHECKOUT_POLL_INTERVAL_MS, new CheckoutAddressRetirement(db, networks, config.CHECKOUT_LATE_PAYMENT_GRACE_SECONDS * 1000), logger),
    loopWorker(() => startDepositWatchers(networks.ported(), (n) => new DepositWatcher(n, services.chainActivity, services.chains, services.watchedWallets, watchOptions, logger))),
    ...(config.SETTLEMENT_ENABLED ? [settlementWorker(platform, services, networks)] : []),
  ];
}

/** Trades settled on chain in batches, one batcher per chain under a lease, and the periodic reconciliation. */
function settlementWorker(platform: Platform, services: Services, networks: ChainNetworks): Worker {
  const { config, db, logger } = platform;
  const batcher = new SettlementBatcher(
    db,
    platform.outbox,
    services.tradingWithdrawals,
    { batchSize: config.SETTLEMENT_BATCH_SIZE, maxAgeMs: config.SETTLEMENT_BATCH_MAX_AGE_MS, bumpAfterMs: config.SETTLEMENT_FEE_BUMP_AFTER_MS, bumpPercent: config.TRANSFER_FEE_BUMP_PERCENT, reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS },
    logger,
    platform.failpoints,
  );
  const options = { pollIntervalMs: config.SETTLEMENT_POLL_INTERVAL_MS, leaseMs: config.SETTLEMENT_LEASE_MS, reconcileIntervalMs: config.SETTLEMENT_RECONCILE_INTERVAL_MS };
  return new SettlementWorker(db, networks, services.settlementDeployments, batcher, services.settlementReconciler, services.tradingDepositReorgs, services.tradingExits, platform.metrics, options, logger);
}
