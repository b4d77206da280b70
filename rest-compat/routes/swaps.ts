import type { RouteRow } from '../route-table';

/** Swaps on each chain's Uniswap V2 (/v1/swaps). */
export const swapRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/swaps/quote', field: 'swapQuote', envelope: 'single', summary: "Quote a swap on the chain's DEX (fromAssetId, toAssetId, amount, order FASTEST|CHEAPEST|RECOMMENDED|NO_SLIPPAGE, slippageTolerance in percent): expected and minimum output, price impact, route, pool fees and gas", tag: 'Swaps' },
  { method: 'POST', path: '/v1/swaps', field: 'createSwap', body: 'input', envelope: 'single', status: 201, summary: 'Swap from a master wallet (masterWalletId) or deposit address (addressId): `{fromAssetId, toAssetId, amount, recipient, order, slippageTolerance, minimumOutput, maxPriceImpact}`. The minimum output (the stricter of the slippage tolerance minimum and the caller `minimumOutput`, refused with 422 when the pools give less now) is enforced on chain; a price impact above the cap (`maxPriceImpact`, default 3%) is refused with 422; an approval is sent first when the router may not yet spend the token. Idempotent with an Idempotency-Key', tag: 'Swaps' },
  { method: 'GET', path: '/v1/swaps', field: 'swaps', envelope: 'coreList', summary: 'Swaps, newest first (status, masterWalletId, addressId, limit, offset)', tag: 'Swaps' },
  { method: 'GET', path: '/v1/swaps/{swapId}', field: 'swap', params: { swapId: 'id' }, envelope: 'single', summary: 'One swap with its status, output, transaction hash and gas', tag: 'Swaps' },
];
