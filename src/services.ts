import type { Platform } from './platform/platform';
import { OrganizationService } from './modules/organizations/organization.service';
import { ApiKeyService } from './modules/api-keys/api-key.service';
import { EngineStatusService } from './modules/engine-status/engine-status.service';
import { WebhookService } from './modules/webhooks/webhook.service';
import { DeliveryScheduler } from './modules/webhooks/delivery-scheduler';
import { deliveryQueue } from './modules/webhooks/webhook-delivery';
import { OutboundGuard } from './platform/net/outbound-guard';
import { GuardedHttp } from './platform/net/guarded-http';
import type { LiveEventFeed } from './platform/events/live-feed';
import { ChainService } from './modules/chains/chain.service';
import type { ChainNetworks } from './modules/chains/chain-networks';
import { MasterWalletService } from './modules/wallets/master-wallet.service';
import { AddressService } from './modules/wallets/address.service';
import { WalletKeys } from './modules/wallets/wallet-keys';
import { MarketService } from './modules/markets/market.service';
import { LedgerService } from './modules/ledger/ledger.service';
import { OrderService } from './modules/orders/order.service';
import { OrderQueries } from './modules/orders/order-queries';
import { MarketDataService } from './modules/market-data/market-data.service';
import { WalletBalances } from './modules/ledger/wallet-balances';
import { WatchedWallets } from './modules/wallets/watched-wallets';
import { ChainActivityRecorder } from './modules/deposits/chain-activity-recorder';
import { ChainTransferHistoryService } from './modules/deposits/chain-transfer-history.service';
import { DevFaucetService } from './modules/dev-faucet/dev-faucet.service';
import { SendingWallets } from './modules/wallets/sending-wallets';
import { TransferService } from './modules/withdrawals/transfer.service';
import { AutoSweeper } from './modules/withdrawals/auto-sweeper';
import { CustodyLedgerSync } from './modules/ledger/custody-ledger-sync';
import { RedisChannel } from './platform/redis-channel';
import { WalletDebts } from './modules/ledger/wallet-debts';
import { SettlementBatchService } from './modules/settlement/settlement-batch.service';
import { SettlementDeployments } from './modules/settlement/settlement-deployments';
import { SettlementLedgerView } from './modules/settlement/settlement-ledger-view';
import { SettlementReconciler } from './modules/settlement/settlement-reconciler';
import { SettlementFunding } from './modules/settlement/funding';

/** A caller's recovery RPC node gets this long per request and may answer this much. */
const RECOVERY_RPC_TIMEOUT_MS = 5_000;
const RECOVERY_RPC_MAX_RESPONSE_BYTES = 1_048_576;

/** Every domain service, wired once per process and handed to resolvers through the context. */
export interface Services {
  organizations: OrganizationService;
  apiKeys: ApiKeyService;
  engineStatus: EngineStatusService;
  webhooks: WebhookService;
  /** Queues webhook deliveries: the service, the worker role's outbox fan-out and its sweeper share it. */
  deliveryScheduler: DeliveryScheduler;
  /** Where webhooks may be sent (private addresses only with WEBHOOKS_ALLOW_PRIVATE_URLS). */
  webhookGuard: OutboundGuard;
  /** Committed events as they happen, for GraphQL subscriptions. */
  liveFeed: LiveEventFeed;
  chains: ChainService;
  /** The chains of this deployment and their JSON-RPC providers. */
  networks: ChainNetworks;
  walletKeys: WalletKeys;
  masterWallets: MasterWalletService;
  addresses: AddressService;
  watchedWallets: WatchedWallets;
  /** Records chain activity of watched wallets; the deposit watchers write through it. */
  chainActivity: ChainActivityRecorder;
  chainTransferHistory: ChainTransferHistoryService;
  devFaucet: DevFaucetService;
  sendingWallets: SendingWallets;
  transfers: TransferService;
  /** Order book: markets, the internal ledger, orders (one engine per market), market data. */
  markets: MarketService;
  ledger: LedgerService;
  /** Credits deposits to the ledger and debits transfers out; the transaction sender reports failures to it. */
  custodyLedgerSync: CustodyLedgerSync;
  orders: OrderService;
  orderQueries: OrderQueries;
  walletBalances: WalletBalances;
  marketData: MarketDataService;
  /** On-chain settlement of trades: the contracts, the batches API, funding and reconciliation. */
  settlementDeployments: SettlementDeployments;
  settlementBatches: SettlementBatchService;
  settlementFunding: SettlementFunding;
  settlementReconciler: SettlementReconciler;
}

export function createServices(platform: Platform, networks: ChainNetworks): Services {
  const { db, config, outbox, unitOfWork } = platform;
  const organizations = new OrganizationService(db);
  const apiKeys = new ApiKeyService(db, config.KEEL_ENV, config.API_KEY_ROTATION_GRACE_SECONDS, platform.authenticator, platform.redis, organizations, unitOfWork);
  const deliveryScheduler = new DeliveryScheduler(deliveryQueue(platform));
  const webhookGuard = new OutboundGuard(config.WEBHOOKS_ALLOW_PRIVATE_URLS);
  const webhooks = new WebhookService(db, webhookGuard, deliveryScheduler, config.WEBHOOK_SECRET_ROTATION_GRACE_SECONDS, platform.secretBox, unitOfWork);
  const chains = new ChainService(db);
  const walletKeys = new WalletKeys(platform.secretBox);
  const masterWallets = new MasterWalletService(db, outbox, walletKeys, chains, networks, unitOfWork);
  const recoveryRpc = new GuardedHttp(new OutboundGuard(config.RECOVERY_RPC_ALLOW_PRIVATE_URLS), { timeoutMs: RECOVERY_RPC_TIMEOUT_MS, maxResponseBytes: RECOVERY_RPC_MAX_RESPONSE_BYTES, keepAliveMs: 1_000 });
  const addresses = new AddressService(db, outbox, masterWallets, chains, networks, recoveryRpc, unitOfWork);
  const sendingWallets = new SendingWallets(db, walletKeys, masterWallets, addresses);
  const ledger = new LedgerService(db, masterWallets, addresses);
  const custodyLedgerSync = new CustodyLedgerSync(ledger, chains, new WalletDebts(ledger, outbox, platform.metrics), platform.logger);
  const transfers = new TransferService(db, sendingWallets, chains, networks, custodyLedgerSync, unitOfWork);
  const chainActivity = new ChainActivityRecorder(db, outbox);
  // The ledger first: a sweep takes what the deposit has just credited.
  chainActivity.onDeposit(custodyLedgerSync);
  chainActivity.onDeposit(new AutoSweeper(sendingWallets, chains, networks, transfers, platform.logger));
  const markets = new MarketService(db, chains, unitOfWork, new RedisChannel(platform.redis, `${config.REDIS_PREFIX}markets:changed`));
  const orders = new OrderService(db, markets, ledger, unitOfWork);
  const settlementDeployments = new SettlementDeployments(db, config, platform.logger);
  custodyLedgerSync.settleThrough(new SettlementLedgerView(settlementDeployments));
  return {
    watchedWallets: new WatchedWallets(db),
    chainActivity,
    chainTransferHistory: new ChainTransferHistoryService(db, masterWallets, addresses, chains),
    devFaucet: new DevFaucetService(config.KEEL_ENV, networks, chains),
    sendingWallets,
    transfers,
    organizations,
    apiKeys,
    engineStatus: new EngineStatusService(config.KEEL_ENV),
    webhooks,
    deliveryScheduler,
    webhookGuard,
    liveFeed: platform.liveFeed,
    chains,
    networks,
    walletKeys,
    masterWallets,
    addresses,
    markets,
    ledger,
    custodyLedgerSync,
    orders,
    orderQueries: orders.queries,
    walletBalances: new WalletBalances(ledger, chains),
    marketData: new MarketDataService(db, markets, orders.queries),
    settlementDeployments,
    settlementBatches: new SettlementBatchService(db),
    settlementFunding: new SettlementFunding(db, sendingWallets, custodyLedgerSync, platform.logger),
    settlementReconciler: new SettlementReconciler(db, settlementDeployments),
  };
}
