import type { RouteRow } from '../route-table';

/** Payment links and payment intents (/v1/payment/links, /v1/payment/intents, and the spec's /v1/payment-links/{id}). */
export const paymentRoutes: RouteRow[] = [
  { method: 'POST', path: '/v1/payment/links', field: 'createPaymentLink', body: 'input', envelope: 'single', status: 201, summary: 'Create a payment link: name, currency, amount (omit for an open amount), evmSettlementWalletId; optional solanaSettlementWalletId (a master wallet on a Solana cluster of the organisation: the link is paid there too; an EVM wallet: 400 INVALID_NETWORK), slug (unique, 409 DUPLICATE_ENTRY), paymentLimit, expiresAt, allowedBlockchainIds, allowedAssetIds, redirectUrl, successMessage, failureMessage, metadata, imgUrl, channel. Emits payment_link.created', tag: 'Payment links' },
  { method: 'GET', path: '/v1/payment/links', field: 'paymentLinks', envelope: 'coreList', summary: 'List payment links, newest first (isActive, masterWalletId, currency, search, from, to, limit, offset)', tag: 'Payment links' },
  { method: 'GET', path: '/v1/payment/links-by-slug/{slug}', field: 'paymentLinkBySlug', envelope: 'single', summary: "Get one of the organisation's payment links by its slug", tag: 'Payment links' },
  { method: 'GET', path: '/v1/payment/links/{id}', field: 'paymentLink', envelope: 'single', summary: 'Get a payment link', tag: 'Payment links' },
  { method: 'GET', path: '/v1/payment-links/{id}', field: 'paymentLink', operationId: 'get_paymentLink_specPath', envelope: 'single', summary: 'Get a payment link (the path the spec names)', tag: 'Payment links' },
  { method: 'PUT', path: '/v1/payment/links/{id}', field: 'updatePaymentLink', body: 'input', envelope: 'single', summary: 'Update any field of a payment link (new terms apply to new checkouts); emits payment_link.updated', tag: 'Payment links' },
  { method: 'POST', path: '/v1/payment/links/{id}/deactivate', field: 'deactivatePaymentLink', envelope: 'single', summary: 'Deactivate a payment link: the page and the public API refuse new checkouts (PAYMENT_FAILED); emits payment_link.updated', tag: 'Payment links' },
  { method: 'DELETE', path: '/v1/payment/links/{id}', field: 'deletePaymentLink', envelope: 'single', summary: 'Delete a payment link (404 afterwards, page included); emits payment_link.deleted', tag: 'Payment links' },
  { method: 'GET', path: '/v1/payment/links/{id}/transfers', field: 'paymentLinkTransfers', envelope: 'coreList', summary: "Payment-link transfers: deposits to the link's checkout addresses, newest first (kind PAYMENT|LATE|REPEAT, status CONFIRMING|CONFIRMED|REVERTED, from, to, limit, offset)", tag: 'Payment links' },
  { method: 'GET', path: '/v1/payment/links/{id}/checkouts', field: 'paymentLinkCheckouts', envelope: 'coreList', summary: "The link's checkout sessions with their amounts received, due and overpaid (status, from, to, limit, offset)", tag: 'Payment links' },

  { method: 'POST', path: '/v1/payment/intents', field: 'createPaymentIntent', body: 'input', envelope: 'single', status: 201, summary: 'Create a payment intent: amount, assetId, masterWalletId, optional blockchainId, description, metadata, expiresInSeconds; returns its own deposit address. Honours Idempotency-Key. Emits payment_intent.created', tag: 'Payment intents' },
  { method: 'GET', path: '/v1/payment/intents', field: 'paymentIntents', envelope: 'coreList', summary: 'List payment intents, newest first (status, masterWalletId, from, to, limit, offset)', tag: 'Payment intents' },
  { method: 'GET', path: '/v1/payment/intents/{id}', field: 'paymentIntent', envelope: 'single', summary: 'Get a payment intent with its deposits', tag: 'Payment intents' },
  { method: 'POST', path: '/v1/payment/intents/{id}/cancel', field: 'cancelPaymentIntent', body: 'input', envelope: 'single', summary: 'Cancel a REQUIRES_PAYMENT or UNDERPAID intent (409 CONFLICT otherwise); emits payment_intent.cancelled', tag: 'Payment intents' },
];
