import type { RouteRow } from '../route-table';
import { accessTokenCoreRoutes } from './access-tokens';
import { amlRoutes } from './aml';
import { priceRoutes } from './prices';
import { agentRoutes } from './agents';
import { paymentRoutes } from './payments';
import { swapRoutes } from './swaps';
import { settlementRuleRoutes } from './settlement-rules';

/** The core host's REST endpoints (/v1). */
export const coreRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/organization', field: 'organization', envelope: 'single', summary: 'The calling organisation', tag: 'Organisation' },
  { method: 'GET', path: '/v1/organization/usage', field: 'organizationUsage', envelope: 'single', summary: "This UTC month's requests of the organisation (all keys, both hosts) against its monthly quota: limit, used, remaining, resetAt, by day and by key; answered even once the quota is spent", tag: 'Organisation' },

  { method: 'GET', path: '/v1/api-keys', field: 'apiKeys', envelope: 'coreList', summary: 'List API keys (never their secrets)', tag: 'API keys' },
  { method: 'POST', path: '/v1/api-keys', field: 'createApiKey', body: 'input', envelope: 'single', status: 201, summary: "Create an API key; the secret is returned once. tier at most the organisation's (else 422 naming tier); orderbook_market:manage is the operator's and refused (403)", tag: 'API keys' },
  { method: 'GET', path: '/v1/api-keys/{keyId}', field: 'apiKey', params: { keyId: 'id' }, envelope: 'single', summary: 'Get an API key', tag: 'API keys' },
  { method: 'POST', path: '/v1/api-keys/{keyId}/rotate', field: 'rotateApiKey', params: { keyId: 'id' }, body: 'input', envelope: 'single', summary: 'Rotate an API key: a new secret, the old one valid for a grace period', tag: 'API keys' },
  { method: 'DELETE', path: '/v1/api-keys/{keyId}', field: 'revokeApiKey', params: { keyId: 'id' }, envelope: 'single', summary: 'Revoke an API key at once', tag: 'API keys' },

  { method: 'GET', path: '/v1/webhooks/event-types', field: 'webhookEventTypes', envelope: 'single', summary: 'Every value eventTypes accepts, with the upper-case identifiers mapped to dotted names', tag: 'Webhooks' },
  { method: 'POST', path: '/v1/webhooks', field: 'createWebhook', body: 'input', envelope: 'single', status: 201, summary: 'Subscribe a URL to events; the response carries the signing secret', tag: 'Webhooks' },
  { method: 'GET', path: '/v1/webhooks', field: 'webhooks', envelope: 'coreList', summary: 'List subscriptions (limit, offset, isActive)', tag: 'Webhooks' },
  { method: 'GET', path: '/v1/webhooks/{subscriptionId}', field: 'webhook', params: { subscriptionId: 'id' }, envelope: 'single', summary: 'Get a subscription', tag: 'Webhooks' },
  { method: 'PUT', path: '/v1/webhooks/{subscriptionId}', field: 'updateWebhook', params: { subscriptionId: 'id' }, body: 'input', envelope: 'single', summary: 'Update url, isActive (true reactivates), eventTypes, name or description', tag: 'Webhooks' },
  { method: 'DELETE', path: '/v1/webhooks/{subscriptionId}', field: 'deleteWebhook', params: { subscriptionId: 'id' }, envelope: 'single', summary: 'Delete a subscription and its delivery log', tag: 'Webhooks' },
  { method: 'POST', path: '/v1/webhooks/{subscriptionId}/secret/rotate', field: 'rotateWebhookSecret', params: { subscriptionId: 'id' }, body: 'input', envelope: 'single', summary: 'A new signing secret; the old one signs alongside it for the grace period', tag: 'Webhooks' },
  { method: 'POST', path: '/v1/webhooks/{subscriptionId}/recover', field: 'recoverWebhook', params: { subscriptionId: 'id' }, body: 'input', envelope: 'single', summary: 'Re-send every failed delivery created since a given time', tag: 'Webhooks' },
  { method: 'GET', path: '/v1/webhook-events', field: 'webhookEvents', envelope: 'coreList', summary: 'The delivery log (subscriptionId, status, limit, offset), newest first', tag: 'Webhooks' },
  { method: 'GET', path: '/v1/webhook-events/{eventId}', field: 'webhookEvent', params: { eventId: 'id' }, envelope: 'single', summary: 'One delivery record', tag: 'Webhooks' },
  { method: 'POST', path: '/v1/webhook-events/{eventId}/resend', field: 'resendWebhookEvent', params: { eventId: 'id' }, envelope: 'single', summary: 'Attempt the delivery again now', tag: 'Webhooks' },

  { method: 'GET', path: '/v1/blockchains', field: 'blockchains', envelope: 'coreList', summary: 'The chains this deployment runs on, EVM chains and Solana clusters (chainId null, network devnet or mainnet, tokenStandard SPL) (limit, offset, isActive)', tag: 'Chains and assets' },
  { method: 'GET', path: '/v1/blockchains/{id}', field: 'blockchain', envelope: 'single', summary: 'One chain', tag: 'Chains and assets' },
  { method: 'GET', path: '/v1/assets', field: 'assets', envelope: 'coreList', summary: 'Native coins and tokens (blockchainId, symbol, isNative, limit, offset)', tag: 'Chains and assets' },
  { method: 'GET', path: '/v1/assets/{id}', field: 'asset', envelope: 'single', summary: 'One asset', tag: 'Chains and assets' },

  { method: 'POST', path: '/v1/master-wallets', field: 'createMasterWallet', body: 'input', envelope: 'single', status: 201, summary: 'Create an HD master wallet on a chain (blockchainId, name, description, metadata, configurations); configurations.security and .autoSweep need the admin scope, and autoSweep.destinationAddress must be the wallet or one of security.allowedRecipients', tag: 'Master wallets' },
  { method: 'GET', path: '/v1/master-wallets', field: 'masterWallets', envelope: 'coreList', summary: 'List master wallets (isActive, blockchainId, limit, offset), newest first', tag: 'Master wallets' },
  { method: 'GET', path: '/v1/master-wallets/{masterId}', field: 'masterWallet', params: { masterId: 'id' }, envelope: 'single', summary: 'Get a master wallet with its analytics and enabled blockchains', tag: 'Master wallets' },
  { method: 'PATCH', path: '/v1/master-wallets/{masterId}', field: 'updateMasterWallet', params: { masterId: 'id' }, body: 'input', envelope: 'single', summary: 'Update name, description, metadata, isActive; configurations are merged one level deep (security and autoSweep need the admin scope; sweeps only to the wallet or an allowed recipient)', tag: 'Master wallets' },
  { method: 'GET', path: '/v1/master-wallets/{masterId}/balances', field: 'masterWalletBalances', params: { masterId: 'id' }, envelope: 'single', summary: "The wallet address's on-chain balance of every registered asset (blockchainId filter)", tag: 'Master wallets' },
  { method: 'GET', path: '/v1/master-wallets/{masterId}/nfts', field: 'masterWalletNfts', params: { masterId: 'id' }, envelope: 'single', summary: "The NFTs the wallet's own address holds, read from the chain: `[{asset, blockchainId, standard, tokenId, amount}]` for every ERC-721 / ERC-1155 token Keel saw move to or from it (blockchainId filter)", tag: 'Master wallets' },
  { method: 'POST', path: '/v1/master-wallets/{masterId}/monitoring/{blockchainId}/disable', field: 'disableMasterWalletMonitoring', params: { masterId: 'id' }, envelope: 'dataWithMessage', summary: 'Stop watching the wallet and its addresses for deposits on a chain', tag: 'Master wallets' },
  { method: 'POST', path: '/v1/master-wallets/{masterId}/monitoring/{blockchainId}/enable', field: 'enableMasterWalletMonitoring', params: { masterId: 'id' }, envelope: 'dataWithMessage', summary: 'Watch the wallet on a chain again (MONITORING_FAILED when it cannot be)', tag: 'Master wallets' },

  { method: 'GET', path: '/v1/master-wallets/{masterId}/transactions', field: 'masterWalletTransactions', params: { masterId: 'id' }, envelope: 'raw', summary: 'Transfers to and from the wallet and its addresses: `{transfer, pageInfo: {hasMore, nextCursor}, totalCount}` (direction incoming|outgoing, sort ASC|DESC, cursor, limit, assetId, blockchainId, status, category external|erc20|erc721|erc1155|internal|specialnft; an NFT record carries tokenId)', tag: 'Transactions' },
  { method: 'GET', path: '/v1/addresses/{addressId}/transactions', field: 'addressTransactions', params: { addressId: 'id' }, envelope: 'raw', summary: 'Transfers to and from one deposit address, same parameters and wrapper as the master wallet list', tag: 'Transactions' },
  { method: 'POST', path: '/v1/master-wallets/{masterId}/transfer', field: 'transferFromMasterWallet', params: { masterId: 'id' }, body: 'input', envelope: 'single', status: 201, summary: 'Send assets from the master wallet address: `{assets: [{assetId, recipient, amount, tokenId}], note}` (an NFT collection line names tokenId and is sent with safeTransferFrom; on a Solana cluster, SOL and SPL tokens to a base58 recipient, see docs/solana.md); status QUEUED, or PENDING_APPROVAL under security.requireApprovalForTransfers; security.maxTransferAmount caps the request\'s total of each asset', tag: 'Transfers' },
  { method: 'POST', path: '/v1/addresses/{addressId}/transfer', field: 'transferFromAddress', params: { addressId: 'id' }, body: 'input', envelope: 'single', status: 201, summary: 'Send assets from a deposit address (same body as the master wallet transfer)', tag: 'Transfers' },
  { method: 'POST', path: '/v1/master-wallets/{masterId}/transfer/estimate-gas', field: 'estimateTransferGas', params: { masterId: 'id' }, body: 'input', envelope: 'single', summary: 'Gas for sending these lines from the master wallet at current fees', tag: 'Transfers' },
  { method: 'POST', path: '/v1/master-wallets/{masterId}/sign/message', field: 'signMessageWithMasterWallet', params: { masterId: 'id' }, body: 'input', envelope: 'single', status: 201, summary: "Sign a message (EIP-191 personal_sign) with the master wallet's key (admin scope): `{message, encoding: UTF8|HEX}`; SIGNED with the signature, or PENDING_APPROVAL under security.requireApprovalForTransfers (approve the transfer it names)", tag: 'Signing' },
  { method: 'POST', path: '/v1/addresses/{addressId}/sign/message', field: 'signMessageWithAddress', params: { addressId: 'id' }, body: 'input', envelope: 'single', status: 201, summary: "Sign a message with a deposit address's key (same body)", tag: 'Signing' },
  { method: 'POST', path: '/v1/master-wallets/{masterId}/sign/typed-data', field: 'signTypedDataWithMasterWallet', params: { masterId: 'id' }, body: 'input', envelope: 'single', status: 201, summary: 'Sign EIP-712 typed data (admin scope): `{typedData: {domain, types, primaryType, message}, acknowledgeRisk}`; a Permit, Permit2 or other spending grant is 403 SPENDING_APPROVAL_REFUSED unless acknowledgeRisk is SPENDING_APPROVAL and security.allowSpendingApprovals is on; counterparties screened (SANCTIONED_ADDRESS)', tag: 'Signing' },
  { method: 'POST', path: '/v1/addresses/{addressId}/sign/typed-data', field: 'signTypedDataWithAddress', params: { addressId: 'id' }, body: 'input', envelope: 'single', status: 201, summary: "Sign EIP-712 typed data with a deposit address's key (same body and rules)", tag: 'Signing' },
  { method: 'POST', path: '/v1/master-wallets/{masterId}/sign/transaction', field: 'signTransactionWithMasterWallet', params: { masterId: 'id' }, body: 'input', envelope: 'single', status: 201, summary: 'Sign an EIP-1559 transaction (admin scope): `{blockchainId, to, value, data, nonce, gasLimit, maxFeePerGas, maxPriorityFeePerGas, broadcast, acknowledgeRisk}`; the recipient and value (an ERC-20 transfer or approve decoded) under security.allowedRecipients and maxTransferAmount; broadcast: QUEUED for the transaction sender (nonce and fees are Keel\'s), then SIGNED and CONFIRMED', tag: 'Signing' },
  { method: 'POST', path: '/v1/addresses/{addressId}/sign/transaction', field: 'signTransactionWithAddress', params: { addressId: 'id' }, body: 'input', envelope: 'single', status: 201, summary: "Sign (or broadcast) a transaction with a deposit address's key (same body and rules)", tag: 'Signing' },
  { method: 'GET', path: '/v1/master-wallets/{masterId}/signatures', field: 'masterWalletSignatures', params: { masterId: 'id' }, envelope: 'coreList', summary: "The master wallet's own signing requests and outcomes, newest first (status, kind, limit, offset)", tag: 'Signing' },
  { method: 'GET', path: '/v1/addresses/{addressId}/signatures', field: 'addressSignatures', params: { addressId: 'id' }, envelope: 'coreList', summary: "A deposit address's signing requests and outcomes, newest first (status, kind, limit, offset)", tag: 'Signing' },
  { method: 'GET', path: '/v1/signatures/{signatureId}', field: 'signature', params: { signatureId: 'id' }, envelope: 'single', summary: 'One signing request and its outcome', tag: 'Signing' },
  { method: 'GET', path: '/v1/transfers', field: 'transfers', envelope: 'coreList', summary: 'Withdrawals, sweeps and gas top-ups, newest first (status, masterWalletId, limit, offset)', tag: 'Transfers' },
  { method: 'GET', path: '/v1/transfers/{transferId}', field: 'transfer', params: { transferId: 'id' }, envelope: 'single', summary: 'One transfer with its lines, transaction hashes and fee bumps', tag: 'Transfers' },
  { method: 'POST', path: '/v1/transfers/{transferId}/approve', field: 'approveTransfer', params: { transferId: 'id' }, envelope: 'single', summary: 'Release a transfer waiting for approval (admin scope)', tag: 'Transfers' },
  { method: 'POST', path: '/v1/transfers/{transferId}/cancel', field: 'cancelTransfer', params: { transferId: 'id' }, envelope: 'single', summary: "Cancel a transfer still being sent (admin scope; EVM chains): lines not yet signed fail at once; a signed line's nonce gets a zero-value transaction to the sender, dearer than its own, and whichever is mined decides (the line FAILED and refunded, or it stands). 409 once the transfer is final or while it waits for approval; asking again while it is being sent answers the same", tag: 'Transfers' },
  { method: 'POST', path: '/v1/transfers/{transferId}/reject', field: 'rejectTransfer', params: { transferId: 'id' }, envelope: 'single', summary: 'Refuse a transfer waiting for approval (admin scope)', tag: 'Transfers' },
  { method: 'POST', path: '/v1/dev/faucet', field: 'devFaucet', body: 'input', envelope: 'single', summary: 'Sandbox only (403 in production): send dev coins or test tokens, or mint a test NFT (KNFT ERC-721, KITEM ERC-1155 with tokenId), on a Keel dev chain, or SOL, USDC or USDT on the sandbox Solana network (blockchainId, address, asset id or symbol, amount, tokenId)', tag: 'Sandbox' },
  { method: 'POST', path: '/v1/master-wallets/{masterId}/addresses', field: 'createAddress', params: { masterId: 'masterWalletId' }, body: 'input', envelope: 'single', status: 201, summary: 'Derive the next deposit address (name, metadata)', tag: 'Addresses' },
  { method: 'GET', path: '/v1/master-wallets/{masterId}/addresses', field: 'addresses', params: { masterId: 'masterWalletId' }, envelope: 'coreList', summary: "A master wallet's deposit addresses (isActive, limit, offset), newest first", tag: 'Addresses' },
  { method: 'GET', path: '/v1/addresses/{addressId}', field: 'address', params: { addressId: 'id' }, envelope: 'single', summary: 'Get a deposit address', tag: 'Addresses' },
  { method: 'PATCH', path: '/v1/addresses/{addressId}', field: 'updateAddress', params: { addressId: 'id' }, body: 'input', envelope: 'single', summary: 'Update name, metadata or isActive', tag: 'Addresses' },
  { method: 'POST', path: '/v1/addresses/{addressId}/deactivate', field: 'deactivateAddress', params: { addressId: 'id' }, envelope: 'single', summary: 'Deactivate an address: Keel stops watching it', tag: 'Addresses' },
  { method: 'GET', path: '/v1/addresses/{addressId}/nfts', field: 'addressNfts', params: { addressId: 'id' }, envelope: 'single', summary: 'The NFTs the deposit address holds, read from the chain (same shape as the master wallet list; blockchainId filter)', tag: 'Addresses' },
  { method: 'GET', path: '/v1/addresses/{addressId}/recoverable-assets', field: 'recoverableAssets', params: { addressId: 'id' }, envelope: 'single', summary: 'Native and token balances at the address, read from the chain (blockchainId required; rpcUrl; tokenAddresses comma-separated)', tag: 'Addresses' },
  ...accessTokenCoreRoutes,
  ...amlRoutes,
  ...priceRoutes,

  ...agentRoutes,
  ...paymentRoutes,
  ...swapRoutes,
  ...settlementRuleRoutes,
];
