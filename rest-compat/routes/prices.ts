import type { RouteRow } from '../route-table';

/** Token prices (core host). */
export const priceRoutes: RouteRow[] = [
  { method: 'POST', path: '/v1/assets/prices/tokens', field: 'tokenPrices', body: 'input', envelope: 'raw', summary: 'USD prices of 1 to 100 tokens by symbol: `{data: [{symbol, price, lastUpdatedAt, source, unavailableReason}], total, hasMore}`; price is null when none can be had', tag: 'Chains and assets' },
];
