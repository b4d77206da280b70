import type { RouteRow } from '../route-table';

/** The order-book host's REST endpoints (/v1/orderbook). */
export const orderbookRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/orderbook/engine/status', field: 'engineStatus', envelope: 'single', summary: 'Engine status of the answering node', tag: 'Engine' },
];
