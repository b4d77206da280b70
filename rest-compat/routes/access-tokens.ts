import type { RouteRow } from '../route-table';

/** Short-lived access tokens on the core host. */
export const accessTokenCoreRoutes: RouteRow[] = [
  { method: 'POST', path: '/v1/tokens', field: 'createAccessToken', body: 'input', envelope: 'single', status: 201, summary: "Issue a short-lived bearer token for a browser (scopes, ttlSeconds): never wider than the calling key (403), default 900 s, at most ACCESS_TOKEN_MAX_TTL_SECONDS; send it as Authorization: Bearer. Expired: 401 TOKEN_EXPIRED; forged, malformed or of another host or environment: 401 INVALID_TOKEN; revoking the key revokes its tokens", tag: 'Access tokens' },
];

/** Short-lived access tokens and realtime channel authorisation on the order-book host. */
export const accessTokenOrderbookRoutes: RouteRow[] = [
  { method: 'POST', path: '/v1/orderbook/tokens', field: 'createAccessToken', body: 'input', envelope: 'single', status: 201, summary: "Issue a short-lived bearer token for a browser (scopes: order-book permissions, ttlSeconds): never wider than the calling key (403); send it as Authorization: Bearer", tag: 'Access tokens' },
  { method: 'POST', path: '/v1/orderbook/realtime/auth', field: 'authorizeRealtime', body: 'input', envelope: 'single', status: 201, summary: 'Realtime channel authorisation: a short-lived token for the graphql-ws connection parameter `token` (wss://<pro host>/graphql), narrowed to channels (book:<SYMBOL>, trades:<SYMBOL>, ticker:<SYMBOL>, candles:<SYMBOL>, orders, fills, balances, settlement) and permissions (default: the key\'s orderbook_market:read and orderbook_order:read), ttlSeconds', tag: 'Engine' },
];
