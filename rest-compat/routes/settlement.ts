import type { RouteRow } from '../route-table';

/** Settlement batches on the order-book host (/v1/orderbook), spread into orderbookRoutes. */
export const settlementRoutes: RouteRow[] = [
  {
    method: 'GET',
    path: '/v1/orderbook/settlement-batches',
    field: 'settlementBatches',
    envelope: 'proList',
    summary: 'Settlement batches, newest first (status, market, from, to, limit, offset): the on-chain transactions that settle trades, netted per wallet and asset',
    tag: 'Settlement',
  },
  {
    method: 'GET',
    path: '/v1/orderbook/settlement-batches/{id}',
    field: 'settlementBatch',
    envelope: 'single',
    summary: 'Get a settlement batch: status, chain, trade count and ids, transaction hash (and replaced ones), block, gas used, fee paid, every transition with its time',
    tag: 'Settlement',
  },
];
