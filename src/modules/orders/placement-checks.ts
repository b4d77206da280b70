import type { PlaceOrder } from '../../engine';
import { divideExact, parseDecimal } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import type { Runtime } from './market-runtime';
import { OrderSide, OrderType, PlaceOrderInput, TimeInForce } from './order.domain';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A placement in the engine's units, with what it must lock while it lives. */
export interface CheckedPlacement {
  command: PlaceOrder;
  lots: bigint;
  ticks: bigint | null;
  lockAssetId: string;
  lock: bigint;
}

/**
 * Checks a placement against its market before anything is locked: the market open, the decimals
 * whole ticks and lots, the minimum notional (the engine's rule), and quotes its lock. Throws the
 * API's errors; the engine's other rejections are recorded as REJECTED orders instead.
 */
export function checkPlacement({ rules, engine }: Runtime, id: string, walletId: string, input: PlaceOrderInput): CheckedPlacement {
  const market = rules.market;
  if (market.status === 'HALTED') throw new KeelError('MARKET_HALTED', `Market ${market.symbol} is halted: it accepts no new orders`, { market: market.symbol });
  const type = input.type ?? OrderType.LIMIT;
  const postOnly = input.postOnly ?? false;

  const quantity = parseDecimal(input.quantity);
  if (!quantity || quantity.int <= 0n) throw KeelError.invalidField('quantity', 'must be a positive decimal');
  const lots = divideExact(quantity, rules.lot);
  if (lots === null) throw KeelError.invalidField('quantity', `must be a multiple of the lot size ${market.lotSize}`);
  if (lots > MAX_SAFE) throw KeelError.invalidField('quantity', 'is too large');

  let ticks: bigint | null = null;
  if (type === OrderType.LIMIT) {
    if (input.price === undefined || input.price === null) throw KeelError.validation([{ field: 'price', error: 'is required for LIMIT orders' }]);
    const price = parseDecimal(input.price);
    if (!price || price.int <= 0n) throw KeelError.invalidField('price', 'must be a positive decimal');
    ticks = divideExact(price, rules.tick);
    if (ticks === null) throw KeelError.invalidField('price', `must be a multiple of the tick size ${market.tickSize}`);
    if (ticks * lots > MAX_SAFE) throw KeelError.invalidField('quantity', 'price × quantity is too large');
  } else {
    if (input.price !== undefined && input.price !== null) throw KeelError.invalidField('price', 'must be absent for MARKET orders');
    if (postOnly) throw KeelError.invalidField('postOnly', 'applies to LIMIT orders only');
  }

  const side = input.side;
  const command: PlaceOrder = {
    kind: 'place',
    id,
    // Self-trade prevention is per wallet (the ledger account), as the engine documents.
    owner: walletId,
    side,
    type,
    price: ticks === null ? undefined : Number(ticks),
    quantity: Number(lots),
    timeInForce: input.timeInForce ?? TimeInForce.GTC,
    postOnly,
  };
  if (engine.check(command) === 'BELOW_MIN_NOTIONAL') {
    throw new KeelError('BELOW_MIN_NOTIONAL', `price × quantity must be at least ${market.minNotional} ${market.quoteSymbol}`, { fields: [{ field: 'quantity', error: `price × quantity is below the minimum notional ${market.minNotional}` }] });
  }
  const lockAssetId = side === OrderSide.BUY ? market.quoteAssetId : market.baseAssetId;
  const lock = side === OrderSide.SELL ? lots * rules.lotUnits : engine.buyLock(command.quantity, command.price) * rules.notionalUnit;
  return { command, lots, ticks, lockAssetId, lock };
}
