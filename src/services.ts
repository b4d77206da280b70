import type { Platform } from './platform/platform';
import type { LiveEventFeed } from './platform/events/live-feed';
import type { ChainNetworks } from './modules/chains';
import { createOrganizationsServices, type OrganizationsServices } from './modules/organizations';
import { createQuotasServices, type QuotasServices } from './modules/quotas';
import { createApiKeysServices, type ApiKeysServices } from './modules/api-keys';
import { createEngineStatusServices, type EngineStatusServices } from './modules/engine-status';
import { createWebhooksServices, type WebhooksServices } from './modules/webhooks';
import { createChainsServices, type ChainsServices } from './modules/chains';
import { createWalletsServices, type WalletsServices } from './modules/wallets';
import { createDepositsServices, type DepositsServices } from './modules/deposits';
import { createDevFaucetServices, type DevFaucetServices } from './modules/dev-faucet';
import { linesMovingOn, createWithdrawalsServices, SettlementContractGuard, type WithdrawalsServices } from './modules/withdrawals';
import { createMarketsServices, type MarketsServices } from './modules/markets';
import { createLedgerServices, type LedgerServices } from './modules/ledger';
import { createOrdersServices, type OrdersServices } from './modules/orders';
import { createMarketDataServices, type MarketDataServices } from './modules/market-data';
import { createAccessTokensServices, type AccessTokensServices } from './modules/access-tokens';
import { createAmlServices, sanctionsDestinationScreen, type AmlServices } from './modules/aml';
import { createPricesServices, type PricesServices } from './modules/prices';
import { createAgentsServices, type AgentsServices } from './modules/agents';
import { createCheckoutServices, openCheckouts, type CheckoutServices } from './modules/checkout';
import { createPaymentLinksServices, paymentLinksByWallet, type PaymentLinksServices } from './modules/payment-links';
import { createPaymentIntentsServices, type PaymentIntentsServices } from './modules/payment-intents';
import { createSwapsServices, type SwapsServices } from './modules/swaps';
import { activeRulesByWallet, createSettlementRulesServices, type SettlementRulesServices } from './modules/settlement-rules';
import { createRealtimeServices, type RealtimeServices } from './modules/realtime';
import { createSettlementDeployments, createSettlementServices, type SettlementServices } from './modules/settlement';
import { createSigningServices, type SigningServices } from './modules/signing';

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

/**
 * `nodeId`: this process's name in the order-book cluster (`claimNodeIdentity`, or `processNodeId` for
 * a process that never leads a shard). Each module builds its own services from what it is given
 * (`create<M>Services` on its face); here they are built in dependency order and wired together:
 * the ports lower modules own, filled by modules above them, and the hooks, in the order they run.
 */
export function createServices(platform: Platform, networks: ChainNetworks, nodeId: string): Services {
  const prices = createPricesServices(platform);
  const organizations = createOrganizationsServices(platform);
  const apiKeys = createApiKeysServices(platform, organizations);
  const webhooks = createWebhooksServices(platform);
  const chains = createChainsServices(platform, networks);
  const aml = createAmlServices(platform, chains);
  // Keel's settlement contracts, known before anything sends: no send to a caller's destination pays one (withdrawals' SettlementContracts port,
  // checked by its SettlementContractGuard), nor does an auto-sweep's destination, refused when the wallet's configuration is saved (wallets'
  // SettlementContractCheck port), nor does signing call one.
  const settlementDeployments = createSettlementDeployments(platform);
  const settlementContractGuard = new SettlementContractGuard(settlementDeployments);
  const wallets = createWalletsServices(platform, { ...chains, screening: aml.walletAml, dependents: { paymentLinks: paymentLinksByWallet, settlementRules: activeRulesByWallet, openCheckouts }, settlementContracts: settlementContractGuard });
  const ledger = createLedgerServices(platform, { ...chains, ...wallets });
  const withdrawals = createWithdrawalsServices(platform, { ...chains, ...wallets, funds: ledger.custodyLedgerSync, screen: aml.sanctions, settlementContractGuard });
  wallets.watchedWallets.watchInUse((blockchainId, blocks) => linesMovingOn(platform.db, blockchainId, blocks));
  const swaps = createSwapsServices(platform, { ...chains, ...wallets, ...withdrawals, destinationScreen: sanctionsDestinationScreen(aml.sanctions) });
  const deposits = createDepositsServices(platform, { ...chains, ...wallets });
  const checkout = createCheckoutServices(platform, { ...chains, ...wallets, sweeper: withdrawals.autoSweeper });
  const paymentLinks = createPaymentLinksServices(platform, { ...chains, ...wallets, ...checkout });
  const paymentIntents = createPaymentIntentsServices(platform, { ...chains, ...wallets, ...checkout });
  const settlementRules = createSettlementRulesServices(platform, { ...chains, ...wallets, ...withdrawals });
  const markets = createMarketsServices(platform, chains);
  const orders = createOrdersServices(platform, { ...markets, ledger: ledger.ledger, nodeId });
  const marketData = createMarketDataServices(platform, { ...markets, ...orders });
  const realtime = createRealtimeServices(platform, { ...markets, ...orders, ...marketData, ...ledger });
  const agents = createAgentsServices(platform, { ...apiKeys, ...organizations, ...chains, ...wallets, walletAml: aml.walletAml, ...withdrawals, screen: aml.sanctions, ...prices });
  const settlement = createSettlementServices(platform, { settlementDeployments, ...chains, ...wallets, ...withdrawals, ...ledger, screen: aml.sanctions, ...markets, ...orders });
  const signing = createSigningServices(platform, { ...chains, ...wallets, ...withdrawals, screen: aml.sanctions, settlementContracts: settlementDeployments });

  // Approval listeners (in the approving transaction): a held swap's router deadline starts again; a held signing request goes on.
  withdrawals.transfers.approvals.onApproved(swaps.swaps.approved);
  withdrawals.transfers.approvals.onApproved(signing.signingOutcomes.approved);
  // Rejection listeners (run in the rejecting transaction; each acts only on its own kind of transfer):
  // a rejected signing request fails, a rejected agent payment's transfer fails the payment, a settlement rule's fails its execution.
  withdrawals.transfers.approvals.onRejected(signing.signingOutcomes.rejected);
  withdrawals.transfers.approvals.onRejected(agents.agentPaymentOutcomes.rejected);
  withdrawals.transfers.approvals.onRejected(settlementRules.settlementOutcomes.rejected);
  // Deposit listeners (hooks run in the scan's transaction, in this order; any error rolls the scan back):
  // 1. the AML flagger first: it marks a sanctioned deposit (aml_flagged_at) that every later listener
  //    reads through heldByAml, so a flagged deposit is never swept nor settled;
  // 2. then the ledger: it credits the deposit, and the sweeper's (and a checkout's) sweep debits that credit,
  //    so the credit must already be there;
  // 3. then the auto-sweeper, the checkout deposits (which sweep a paid checkout through the sweeper) and the
  //    settlement-rule trigger, which only need the flag and the credit before them.
  // A reorg runs the same listeners' `reverted` in the same order (ChainActivityRecorder.allListeners).
  // NFT deposits reach only the flagger: the others count fungible value.
  const { chainActivity } = deposits;
  chainActivity.onDeposit(aml.depositFlagger, { withNfts: true });
  chainActivity.onDeposit(ledger.custodyLedgerSync);
  chainActivity.onDeposit(withdrawals.autoSweeper);
  chainActivity.onDeposit(checkout.checkoutDeposits);
  chainActivity.onDeposit(settlementRules.settlementTrigger);
  // Outflow listener (after the deposit listeners, in the same transaction; before them on a reorg): the ledger
  // debits from custody what left a watched address by a transaction no transfer line of Keel's booked.
  chainActivity.onOutflow(ledger.custodyLedgerSync);

  return {
    liveFeed: platform.liveFeed,
    ...organizations,
    ...createQuotasServices(platform),
    ...apiKeys,
    ...createEngineStatusServices(platform, orders),
    ...webhooks,
    ...chains,
    ...wallets,
    ...deposits,
    ...createDevFaucetServices(platform, chains),
    ...withdrawals,
    ...signing,
    ...markets,
    ...ledger,
    ...orders,
    ...marketData,
    ...createAccessTokensServices(platform, markets),
    ...aml,
    ...prices,
    ...agents,
    ...checkout,
    ...paymentLinks,
    ...paymentIntents,
    ...swaps,
    ...settlementRules,
    ...realtime,
    ...settlement,
  };
}
