import type { RouteRow } from '../route-table';

/** The order-book host's REST endpoints (/v1/orderbook). */
export const orderbookRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/orderbook/organization', field: 'organization', envelope: 'single', summary: 'The calling organisation', tag: 'Organisation' },
];
