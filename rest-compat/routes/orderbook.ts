import type { ErrorCode } from '../../src/platform/errors';
import type { RouteRow } from '../route-table';
import { accessTokenOrderbookRoutes } from './access-tokens';
import { settlementRoutes } from './settlement';

/** What a placement may be refused with besides the host's general codes (the engine's market rules, the market, the wallet, the shard's leader). */
const PLACEMENT_ERRORS: ErrorCode[] = ['NOT_LEADER', 'MARKET_HALTED', 'TRADING_EXIT_REQUESTED', 'POST_ONLY_WOULD_TAKE', 'BELOW_MIN_NOTIONAL'];

/** The order-book host's REST endpoints (/v1/orderbook). */
export const orderbookRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/orderbook/engine/status', field: 'engineStatus', envelope: 'single', summary: 'Engine status of the answering node: the shards it leads (fencing token, lease expiry), its markets\' sequence and queue depth, uptime, and every shard\'s leader as Redis holds it', tag: 'Engine' },

  { method: 'GET', path: '/v1/orderbook/markets', field: 'markets', envelope: 'proList', summary: 'List markets (status, limit, offset), by symbol', tag: 'Markets' },
  { method: 'POST', path: '/v1/orderbook/markets', field: 'createMarket', body: 'input', envelope: 'single', status: 201, summary: "Create a market (symbol, baseAssetId, quoteAssetId, tickSize, lotSize, minNotional, makerFee, takerFee, status); the operator's key only (keel operator key create), or keel market create", tag: 'Markets' },
  { method: 'GET', path: '/v1/orderbook/markets/{symbol}', field: 'market', envelope: 'single', summary: 'Get a market', tag: 'Markets' },
  { method: 'PATCH', path: '/v1/orderbook/markets/{symbol}', field: 'updateMarket', body: 'input', envelope: 'single', summary: "Change fees, minNotional or status (HALTED refuses new orders); the operator's key only, or keel market update", tag: 'Markets' },
  { method: 'GET', path: '/v1/orderbook/markets/{symbol}/book', field: 'orderBook', envelope: 'single', summary: 'Depth per price level (levels, default 20, at most 500)', tag: 'Market data' },
  { method: 'GET', path: '/v1/orderbook/markets/{symbol}/trades', field: 'marketTrades', envelope: 'proList', summary: "The market's public trade tape, newest first (limit, offset): every organisation's trades, without their order ids, wallet ids or fees (a wallet's trades with them: GET /wallets/{walletId}/trades)", tag: 'Market data' },
  { method: 'GET', path: '/v1/orderbook/markets/{symbol}/ticker', field: 'ticker', envelope: 'single', summary: 'Last price, best bid and ask, 24-hour open, high, low, volume and change', tag: 'Market data' },
  { method: 'GET', path: '/v1/orderbook/markets/{marketSymbol}/candles', field: 'candles', params: { marketSymbol: 'symbol' }, envelope: 'single', summary: 'OHLCV candles, oldest first (interval 1m|5m|15m|1h|4h|1d, count at most 500)', tag: 'Market data' },

  { method: 'POST', path: '/v1/orderbook/orders', field: 'placeOrder', body: 'input', envelope: 'single', status: 201, summary: "Place an order (walletId, market, side, type, price, quantity, timeInForce, postOnly, clientOrderId); only the leader of the market's shard takes it, other nodes answer 409 NOT_LEADER with Retry-After and details.leader", tag: 'Orders', errors: PLACEMENT_ERRORS },
  { method: 'GET', path: '/v1/orderbook/orders', field: 'orders', envelope: 'proList', summary: "The organisation's orders (market, status, walletId, limit, offset), newest first", tag: 'Orders' },
  { method: 'GET', path: '/v1/orderbook/orders/{id}', field: 'order', envelope: 'single', summary: 'Get an order', tag: 'Orders' },
  { method: 'GET', path: '/v1/orderbook/orders/{id}/fills', field: 'orderFills', envelope: 'proList', summary: "An order's fills, oldest first (limit, offset)", tag: 'Orders' },
  { method: 'POST', path: '/v1/orderbook/orders/{id}/replace', field: 'replaceOrder', body: 'input', envelope: 'single', status: 201, summary: "Cancel-replace (amend) an OPEN or PARTIALLY_FILLED order (price, quantity, timeInForce, postOnly, clientOrderId; what is not given is the old order's, quantity its unfilled rest as the replace is applied): the old order CANCELLED and the new one placed in one commit, or neither; needs orderbook_order:cancel and orderbook_order:create; other nodes than the shard's leader answer 409 NOT_LEADER", tag: 'Orders', errors: [...PLACEMENT_ERRORS, 'ORDER_NOT_CANCELLABLE'] },
  { method: 'DELETE', path: '/v1/orderbook/orders/{id}', field: 'cancelOrder', envelope: 'single', summary: "Cancel the rest of an open order and release its lock; only the leader of the market's shard cancels, other nodes answer 409 NOT_LEADER with Retry-After and details.leader", tag: 'Orders', errors: ['NOT_LEADER', 'ORDER_NOT_CANCELLABLE'] },

  { method: 'GET', path: '/v1/orderbook/wallets/{walletId}/trades', field: 'walletTrades', envelope: 'proList', summary: "A wallet's trades (limit default 50, offset default 0); 404 unless this organisation has placed an order with the wallet", tag: 'Wallets' },
  { method: 'GET', path: '/v1/orderbook/wallets/{walletId}/balances', field: 'walletBalances', envelope: 'single', summary: "A wallet's trading balances in the ledger (available: what orders and withdrawals may take, 0 while a debt stands in the asset; locked; and debt: owed after a reorg took back a deposit already spent or locked)", tag: 'Wallets' },
  ...accessTokenOrderbookRoutes,
  ...settlementRoutes,
];
