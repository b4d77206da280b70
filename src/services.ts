import type { Platform } from './platform/platform';
import { percentBasisPoints } from './platform/decimal';
import { OrganizationService } from './modules/organizations/organization.service';
import { QuotaService } from './modules/quotas/quota.service';
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
import { NftHoldingsService } from './modules/deposits/nft-holdings.service';
import { DevFaucetService } from './modules/dev-faucet/dev-faucet.service';
import { SendingWallets } from './modules/wallets/sending-wallets';
import { TransferService } from './modules/withdrawals/transfer.service';
import { SigningOutcomes, SigningRecords, SigningService } from './modules/signing';
import { AutoSweeper } from './modules/withdrawals/auto-sweeper';
import { GasTopUps } from './modules/withdrawals/gas-top-up';
import { CustodyLedgerSync } from './modules/ledger/custody-ledger-sync';
import { RedisChannel } from './platform/redis-channel';
import { WalletDebts } from './modules/ledger/wallet-debts';
import { AccessTokenService } from './modules/access-tokens/access-token.service';
import { SanctionsScreen, SanctionsSnapshot } from './modules/aml/sanctions-screen';
import { shippedSanctionsSnapshot } from './modules/aml/sanctions-files';
import { SanctionsLists } from './modules/aml/sanctions-lists';
import { AmlService } from './modules/aml/aml.service';
import { SanctionedDepositFlagger } from './modules/aml/sanctioned-deposit-flagger';
import { WalletAml } from './modules/aml/wallet-aml';
import { FlaggedTransferService } from './modules/aml/flagged-transfer.service';
import { PriceService } from './modules/prices/price.service';
import { KeelPriceSource } from './modules/prices/keel-price-source';
import { ReferencePrices } from './modules/prices/reference-prices';
import { AgentService } from './modules/agents/agent.service';
import { AgentWalletService } from './modules/agents/agent-wallet.service';
import { AgentPolicyService } from './modules/agents/agent-policy.service';
import { AgentPaymentService } from './modules/agents/agent-payment.service';
import { AgentPaymentOutcomes } from './modules/agents/agent-payment-outcomes';
import { CheckoutDesk } from './modules/checkout/checkout-desk';
import { CheckoutDeposits } from './modules/checkout/checkout-deposits';
import { PaymentLinkService } from './modules/payment-links/payment-link.service';
import { PaymentLinkCheckouts } from './modules/payment-links/payment-link-checkouts';
import { PublicCheckoutService } from './modules/payment-links/public-checkout.service';
import { PaymentIntentService } from './modules/payment-intents/payment-intent.service';
import { SwapService } from './modules/swaps/swap.service';
import { DexQuoter } from './modules/swaps/dex-quoter';
import type { DestinationScreen } from './modules/swaps/destination-screen';
import { sanctionsDestinationScreen } from './modules/aml/sanctions-destination-screen';
import { SettlementRuleService } from './modules/settlement-rules/settlement-rule.service';
import { SettlementTrigger } from './modules/settlement-rules/settlement-trigger';
import { SettlementOutcomes } from './modules/settlement-rules/settlement-outcomes';
import { ShardLeadership } from './modules/orders/shard-leadership';
import { ShardMap } from './modules/orders/shard-map';
import { FencedLeases } from './platform/fenced-leases';
import type { Config } from './platform/config';
import { RealtimeHub } from './modules/realtime/realtime-hub';
import { RealtimeService } from './modules/realtime/realtime.service';
import { SettlementBatchService } from './modules/settlement/settlement-batch.service';
import { SettlementDeployments } from './modules/settlement/settlement-deployments';
import { SettlementLedgerView } from './modules/settlement/settlement-ledger-view';
import { SettlementReconciler } from './modules/settlement/settlement-reconciler';
import { TradingService } from './modules/settlement/trading.service';
import { TradingDepositOutcomes } from './modules/settlement/trading-deposit-outcomes';
import { TradingDepositReorgs } from './modules/settlement/trading-deposit-reorgs';
import { TradingWithdrawalSender } from './modules/settlement/trading-withdrawal-sender';
import { TradingMigration } from './modules/settlement/trading-migration';
import { TradingExit } from './modules/settlement/trading-exit';

import type { OrganizationsServices } from './modules/organizations';
import type { QuotasServices } from './modules/quotas';
import type { ApiKeysServices } from './modules/api-keys';
import type { EngineStatusServices } from './modules/engine-status';
import type { WebhooksServices } from './modules/webhooks';
import type { ChainsServices } from './modules/chains';
import type { WalletsServices } from './modules/wallets';
import type { DepositsServices } from './modules/deposits';
import type { DevFaucetServices } from './modules/dev-faucet';
import type { WithdrawalsServices } from './modules/withdrawals';
import type { MarketsServices } from './modules/markets';
import type { LedgerServices } from './modules/ledger';
import type { OrdersServices } from './modules/orders';
import type { MarketDataServices } from './modules/market-data';
import type { AccessTokensServices } from './modules/access-tokens';
import type { AmlServices } from './modules/aml';
import type { PricesServices } from './modules/prices';
import type { AgentsServices } from './modules/agents';
import type { CheckoutServices } from './modules/checkout';
import { paymentLinksByWallet, type PaymentLinksServices } from './modules/payment-links';
import type { PaymentIntentsServices } from './modules/payment-intents';
import type { SwapsServices } from './modules/swaps';
import { activeRulesByWallet, type SettlementRulesServices } from './modules/settlement-rules';
import type { RealtimeServices } from './modules/realtime';
import type { SettlementServices } from './modules/settlement';
import type { SigningServices } from './modules/signing';

/** A caller's recovery RPC node gets this long per request and may answer this much. */
const RECOVERY_RPC_TIMEOUT_MS = 5_000;
const RECOVERY_RPC_MAX_RESPONSE_BYTES = 1_048_576;

/** The platform's own service that resolvers and roles reach through the bag. */
interface PlatformServices {
  /** Committed events as they happen, for GraphQL subscriptions. */
  liveFeed: LiveEventFeed;
}

/**
 * Every domain service, wired once per process, grouped by the module that offers it: each module's
 * face names its group (e.g. `OrdersServices` in src/modules/orders/index.ts). A new module adds its
 * group here, one line; resolvers are handed only what they name (`resolverServices` in schema.ts).
 */
export interface Services
  extends PlatformServices,
    OrganizationsServices,
    QuotasServices,
    ApiKeysServices,
    EngineStatusServices,
    WebhooksServices,
    ChainsServices,
    WalletsServices,
    DepositsServices,
    DevFaucetServices,
    WithdrawalsServices,
    SigningServices,
    MarketsServices,
    LedgerServices,
    OrdersServices,
    MarketDataServices,
    AccessTokensServices,
    AmlServices,
    PricesServices,
    AgentsServices,
    CheckoutServices,
    PaymentLinksServices,
    PaymentIntentsServices,
    SwapsServices,
    SettlementRulesServices,
    RealtimeServices,
    SettlementServices {}

/** `nodeId`: this process's name in the order-book cluster (`claimNodeIdentity`, or `processNodeId` for a process that never leads a shard). */
export function createServices(platform: Platform, networks: ChainNetworks, nodeId: string): Services {
  const { db, config, outbox, unitOfWork } = platform;
  const shippedSanctions = shippedSanctionsSnapshot();
  const sanctions = new SanctionsScreen(shippedSanctions);
  const policyPriceRules = { windowSeconds: config.PRICE_POLICY_WINDOW_SECONDS, minOrganizations: config.PRICE_POLICY_MIN_ORGANIZATIONS, maxDeviationBasisPoints: percentBasisPoints(config.PRICE_POLICY_MAX_DEVIATION_PERCENT) };
  const prices = new PriceService(new KeelPriceSource(db, new ReferencePrices(config.PRICE_REFERENCES, config.PRICE_STABLECOINS), config.PRICE_TRADE_MAX_AGE_SECONDS, policyPriceRules), config.PRICE_CACHE_SECONDS);
  const organizations = new OrganizationService(db);
  const apiKeys = new ApiKeyService(db, config.KEEL_ENV, config.API_KEY_ROTATION_GRACE_SECONDS, platform.authenticator, platform.redis, organizations, unitOfWork);
  const deliveryScheduler = new DeliveryScheduler(deliveryQueue(platform));
  const webhookGuard = new OutboundGuard(config.WEBHOOKS_ALLOW_PRIVATE_URLS);
  const webhooks = new WebhookService(db, webhookGuard, deliveryScheduler, config.WEBHOOK_SECRET_ROTATION_GRACE_SECONDS, platform.secretBox, unitOfWork);
  const chains = new ChainService(db);
  const walletKeys = new WalletKeys(platform.secretBox);
  const walletAml = new WalletAml(sanctions);
  const masterWallets = new MasterWalletService(db, outbox, walletKeys, chains, networks, unitOfWork, walletAml, { paymentLinks: paymentLinksByWallet, settlementRules: activeRulesByWallet });
  const recoveryRpc = new GuardedHttp(new OutboundGuard(config.RECOVERY_RPC_ALLOW_PRIVATE_URLS), { timeoutMs: RECOVERY_RPC_TIMEOUT_MS, maxResponseBytes: RECOVERY_RPC_MAX_RESPONSE_BYTES, keepAliveMs: 1_000 });
  const addresses = new AddressService(db, outbox, masterWallets, walletKeys, chains, networks, recoveryRpc, unitOfWork);
  const sendingWallets = new SendingWallets(db, walletKeys, masterWallets, addresses);
  const ledger = new LedgerService(db, masterWallets, addresses);
  const custodyLedgerSync = new CustodyLedgerSync(ledger, chains, new WalletDebts(ledger, outbox, platform.metrics), platform.logger);
  const transfers = new TransferService(db, sendingWallets, chains, networks, custodyLedgerSync, unitOfWork, sanctions);
  const destinationScreen = sanctionsDestinationScreen(sanctions);
  const swaps = new SwapService(db, sendingWallets, chains, networks, transfers, new DexQuoter(), destinationScreen, unitOfWork, percentBasisPoints(config.SWAP_MAX_PRICE_IMPACT_PERCENT));
  // Approval listener (in the approving transaction): a held swap's router deadline starts again.
  transfers.approvals.onApproved(swaps.approved);
  const signingRecords = new SigningRecords(db, outbox);
  const signingDeps = { chains, networks, screen: sanctions, ensureFunds: transfers.ensureFunds.bind(transfers) };
  const signing = new SigningService(sendingWallets, networks, transfers, signingRecords, signingDeps, unitOfWork);
  const signingOutcomes = new SigningOutcomes(sendingWallets, networks, signingRecords, signingDeps);
  transfers.approvals.onApproved(signingOutcomes.approved);
  transfers.approvals.onRejected(signingOutcomes.rejected);
  const chainActivity = new ChainActivityRecorder(db, outbox);
  // Deposit listeners (hooks run in the scan's transaction, in this order; any error rolls the scan back):
  // 1. the AML flagger first: it marks a sanctioned deposit (aml_flagged_at) that every later listener
  //    reads through heldByAml, so a flagged deposit is never swept nor settled;
  // 2. then the ledger: it credits the deposit, and the sweeper's (and a checkout's) sweep debits that credit,
  //    so the credit must already be there;
  // 3. then the auto-sweeper, the checkout deposits (which sweep a paid checkout through the sweeper) and the
  //    settlement-rule trigger, which only need the flag and the credit before them.
  // A reorg runs the same listeners' `reverted` in the same order (ChainActivityRecorder.allListeners).
  // NFT deposits reach only the flagger: the others count fungible value.
  chainActivity.onDeposit(new SanctionedDepositFlagger(sanctions, outbox), { withNfts: true });
  chainActivity.onDeposit(custodyLedgerSync);
  const gasTopUps = new GasTopUps(sendingWallets, chains, transfers);
  const sweeper = new AutoSweeper(sendingWallets, chains, networks, transfers, gasTopUps, platform.logger);
  chainActivity.onDeposit(sweeper);
  const checkouts = new CheckoutDesk(db, addresses, chains, config.PAYMENT_CONFIRMATIONS);
  const checkoutDeposits = new CheckoutDeposits(checkouts, sweeper);
  chainActivity.onDeposit(checkoutDeposits);
  const paymentLinks = new PaymentLinkService(db, outbox, masterWallets, chains, checkouts, unitOfWork, config.CHECKOUT_PUBLIC_URL);
  checkouts.own('link', new PaymentLinkCheckouts(paymentLinks, outbox));
  const paymentIntents = new PaymentIntentService(db, outbox, masterWallets, chains, checkouts, unitOfWork, config.CHECKOUT_TTL_SECONDS);
  checkouts.own('intent', paymentIntents);
  chainActivity.onDeposit(new SettlementTrigger());
  const markets = new MarketService(db, chains, unitOfWork, new RedisChannel(platform.redis, `${config.REDIS_PREFIX}markets:changed`));
  const shardLeadership = createShardLeadership(platform, nodeId);
  const orders = new OrderService(db, markets, ledger, unitOfWork, shardLeadership, platform.logger);
  const shardOf = (symbol: string) => shardLeadership.shards.shardOf(symbol);
  shardLeadership.onShards({ gained: (shard) => orders.rebuildShard(shardOf, shard), lost: (shard) => orders.dropShard(shardOf, shard) });
  const marketData = new MarketDataService(db, markets, orders.queries);
  const walletBalances = new WalletBalances(ledger, chains);
  const realtimeHub = new RealtimeHub(platform.realtimeBus);
  // Every commit this node makes goes to the other nodes' feeds (and its own) after it commits.
  orders.onCommitted(realtimeHub.publish);
  const agents = new AgentService(db, outbox, apiKeys, organizations, unitOfWork);
  const agentWallets = new AgentWalletService(db, agents, masterWallets, addresses, walletAml, unitOfWork);
  const agentPolicies = new AgentPolicyService(db, agents, unitOfWork);
  const agentPayments = new AgentPaymentService(db, outbox, agents, agentWallets, agentPolicies, chains, transfers, sanctions, prices, unitOfWork);
  const agentPaymentOutcomes = new AgentPaymentOutcomes(agentPayments);
  // Rejection listeners (run in the rejecting transaction; each acts only on its own kind of transfer):
  // a rejected agent payment's transfer fails the payment, a settlement rule's fails its execution.
  transfers.approvals.onRejected(agentPaymentOutcomes.rejected);
  const settlementOutcomes = new SettlementOutcomes(chains, sendingWallets, outbox, { baseBackoffMs: config.SETTLEMENT_RULES_RETRY_BASE_MS, maxBackoffMs: 600_000, maxAttempts: config.SETTLEMENT_RULES_MAX_ATTEMPTS }, platform.logger);
  transfers.approvals.onRejected(settlementOutcomes.rejected);
  const settlementDeployments = new SettlementDeployments(db, config, platform.logger);
  custodyLedgerSync.settleThrough(new SettlementLedgerView(settlementDeployments));
  const trading = new TradingService(db, sendingWallets, chains, networks, transfers, gasTopUps, ledger, settlementDeployments, sanctions, outbox, unitOfWork);
  return {
    // platform
    liveFeed: platform.liveFeed,
    // organizations
    organizations,
    // quotas
    quotas: new QuotaService(db, platform.quota),
    // api-keys
    apiKeys,
    // engine-status
    engineStatus: new EngineStatusService(config.KEEL_ENV, config.KEEL_ROLES, shardLeadership, orders),
    // webhooks
    webhooks,
    deliveryScheduler,
    webhookGuard,
    // chains
    chains,
    networks,
    // wallets
    watchedWallets: new WatchedWallets(db),
    sendingWallets,
    walletKeys,
    masterWallets,
    addresses,
    // deposits
    chainActivity,
    chainTransferHistory: new ChainTransferHistoryService(db, masterWallets, addresses, chains),
    nftHoldings: new NftHoldingsService(db, masterWallets, addresses, chains, networks),
    // dev-faucet
    devFaucet: new DevFaucetService(config.KEEL_ENV, networks, chains),
    // withdrawals
    transfers,
    gasTopUps,
    // signing
    signing,
    signingOutcomes,
    // markets
    markets,
    // ledger
    ledger,
    custodyLedgerSync,
    walletBalances,
    // orders
    orders,
    shardLeadership,
    orderQueries: orders.queries,
    // market-data
    marketData,
    // access-tokens
    accessTokens: new AccessTokenService(platform.accessTokens, markets, { defaultTtlSeconds: config.ACCESS_TOKEN_DEFAULT_TTL_SECONDS, maxTtlSeconds: config.ACCESS_TOKEN_MAX_TTL_SECONDS }),
    // aml
    sanctions,
    sanctionsLists: new SanctionsLists(db),
    shippedSanctions,
    aml: new AmlService(sanctions),
    walletAml,
    flaggedTransfers: new FlaggedTransferService(db, chains, outbox, unitOfWork),
    // prices
    prices,
    // agents
    agents,
    agentPaymentOutcomes,
    agentWallets,
    agentPolicies,
    agentPayments,
    // checkout
    checkouts,
    checkoutDeposits,
    // payment-links
    paymentLinks,
    publicCheckout: new PublicCheckoutService(db, chains, checkouts, unitOfWork, config.CHECKOUT_TTL_SECONDS),
    // payment-intents
    paymentIntents,
    // swaps
    swaps,
    destinationScreen,
    // settlement-rules
    settlementOutcomes,
    settlementRules: new SettlementRuleService(db, sendingWallets, chains, networks, outbox, unitOfWork),
    // realtime
    realtime: new RealtimeService(realtimeHub, markets, orders.queries, marketData, walletBalances),
    // settlement
    settlementDeployments,
    settlementBatches: new SettlementBatchService(db, markets, chains),
    settlementReconciler: new SettlementReconciler(db, settlementDeployments, outbox),
    trading,
    tradingMigration: new TradingMigration(db, settlementDeployments, trading, sendingWallets, platform.logger),
    tradingExit: new TradingExit(db, settlementDeployments, trading, sendingWallets, ledger, custodyLedgerSync),
    tradingDepositOutcomes: new TradingDepositOutcomes(ledger, outbox),
    tradingDepositReorgs: new TradingDepositReorgs(db, outbox, platform.metrics, platform.logger, { reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS }),
    tradingWithdrawals: new TradingWithdrawalSender(db, sendingWallets, ledger, outbox, platform.failpoints, platform.logger),
  };
}

function createShardLeadership(platform: Platform, nodeId: string): ShardLeadership {
  const { config } = platform;
  const shards = new ShardMap(config.ORDERBOOK_SHARDS, config.ORDERBOOK_SHARD_MAP);
  const ttlMs = config.ORDERBOOK_LEASE_TTL_MS;
  const marginMs = config.ORDERBOOK_LEASE_MARGIN_MS ?? Math.floor(ttlMs / 5);
  const renewMs = config.ORDERBOOK_LEASE_RENEW_MS ?? Math.floor(ttlMs / 3);
  if (renewMs + marginMs >= ttlMs) throw new Error(`Invalid configuration:\n  ORDERBOOK_LEASE_RENEW_MS (${renewMs}) + ORDERBOOK_LEASE_MARGIN_MS (${marginMs}) must be below ORDERBOOK_LEASE_TTL_MS (${ttlMs})`);
  const preferred = config.ORDERBOOK_PREFERRED_SHARDS === 'all' ? undefined : new Set(shards.parseSelection(config.ORDERBOOK_PREFERRED_SHARDS));
  const options = { nodeId, eligible: shards.parseSelection(config.ORDERBOOK_LEAD_SHARDS), preferred, ttlMs, renewMs, marginMs };
  return new ShardLeadership(platform.db, new FencedLeases(platform.redis, config.REDIS_PREFIX), shards, options, platform.logger);
}
