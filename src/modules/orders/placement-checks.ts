import { admitPlacement } from '../../engine';
import type { PlaceOrder, PlacementRefusal, RejectReason, Steps } from '../../engine';
import { divideExact, parseDecimal, Scaled } from '../../platform/decimal';
import { ErrorCode, KeelError } from '../../platform/errors';
import type { MarketView } from '../markets';
import type { Runtime } from './market-runtime';
import { OrderSide, OrderType, PlaceOrderInput, TimeInForce } from './order.domain';
import type { WalletExit } from './wallet-exits';

/** A placement in the engine's units, with what it must lock while it lives. */
export interface CheckedPlacement {
  command: PlaceOrder;
  lots: bigint;
  ticks: bigint | null;
  lockAssetId: string;
  lock: bigint;
}

/**
 * Checks a placement against its market before anything is locked: the market open, the wallet
 * not leaving the chain's settlement contract (`exit`, its request to exit if it made one), then
 * the engine's market rules (`admitPlacement`: ticks, lots, minimum notional, the lock), whose
 * refusals become the API's errors; the engine's other rejections are recorded as REJECTED orders.
 */
export function checkPlacement({ rules, engine }: Runtime, id: string, walletId: string, input: PlaceOrderInput, exit?: WalletExit): CheckedPlacement {
  const market = rules.market;
  if (market.status === 'HALTED') throw new KeelError('MARKET_HALTED', `Market ${market.symbol} is halted: it accepts no new orders`, { market: market.symbol });
  if (exit) throw exitRefusal(walletId, exit, market);
  const admitted = admitPlacement(engine, rules, {
    id,
    // Self-trade prevention is per wallet (the ledger account), as the engine documents.
    owner: walletId,
    side: input.side,
    type: input.type ?? OrderType.LIMIT,
    timeInForce: input.timeInForce ?? TimeInForce.GTC,
    postOnly: input.postOnly ?? false,
    quantity: inSteps(input.quantity, rules.lot),
    price: input.price === undefined || input.price === null ? undefined : inSteps(input.price, rules.tick),
  });
  if (typeof admitted === 'string') throw refusal(admitted, market);
  const { command, lock } = admitted;
  const lockAssetId = command.side === OrderSide.BUY ? market.quoteAssetId : market.baseAssetId;
  return { command, lots: BigInt(command.quantity), ticks: command.price === undefined ? null : BigInt(command.price), lockAssetId, lock };
}

/**
 * A wallet that asked to exit the chain's settlement contract places no more orders on its markets:
 * its balance may leave the contract once the exit delay has passed, and a trade against it could
 * then not settle. The contract cannot take a request back, so neither does this refusal.
 */
function exitRefusal(walletId: string, exit: WalletExit, market: MarketView): KeelError {
  return new KeelError(
    'TRADING_EXIT_REQUESTED',
    `The wallet has asked to exit the settlement contract of ${market.symbol}'s chain (its balance may leave the contract from ${exit.availableAt.toISOString()}): it places no more orders on the chain's markets`,
    { walletId, market: market.symbol, requestedAt: exit.requestedAt.toISOString(), availableAt: exit.availableAt.toISOString() },
  );
}

function inSteps(text: string, step: Scaled): Steps {
  const value = parseDecimal(text);
  if (!value || value.int <= 0n) return { positive: false, whole: null };
  return { positive: true, whole: divideExact(value, step) };
}

/** The refusals that name one field of the request, with the API's wording. */
const FIELD_REFUSALS: Record<Exclude<PlacementRefusal, 'PRICE_REQUIRED' | 'BELOW_MIN_NOTIONAL'>, (m: MarketView) => [field: string, error: string]> = {
  QUANTITY_NOT_POSITIVE: () => ['quantity', 'must be a positive decimal'],
  QUANTITY_OFF_LOT: (m) => ['quantity', `must be a multiple of the lot size ${m.lotSize}`],
  QUANTITY_TOO_LARGE: () => ['quantity', 'is too large'],
  PRICE_NOT_POSITIVE: () => ['price', 'must be a positive decimal'],
  PRICE_OFF_TICK: (m) => ['price', `must be a multiple of the tick size ${m.tickSize}`],
  NOTIONAL_TOO_LARGE: () => ['quantity', 'price × quantity is too large'],
  PRICE_NOT_ALLOWED: () => ['price', 'must be absent for MARKET orders'],
  POST_ONLY_NOT_LIMIT: () => ['postOnly', 'applies to LIMIT orders only'],
};

function refusal(reason: PlacementRefusal, market: MarketView): KeelError {
  if (reason === 'PRICE_REQUIRED') return KeelError.validation([{ field: 'price', error: 'is required for LIMIT orders' }]);
  if (reason === 'BELOW_MIN_NOTIONAL') {
    return new KeelError('BELOW_MIN_NOTIONAL', `price × quantity must be at least ${market.minNotional} ${market.quoteSymbol}`, { fields: [{ field: 'quantity', error: `price × quantity is below the minimum notional ${market.minNotional}` }] });
  }
  return KeelError.invalidField(...FIELD_REFUSALS[reason](market));
}

/**
 * The API's error for each reason the engine rejects an order. A price or quantity the engine would
 * refuse is refused before it by the market rules (INVALID_FIELD naming the field); should the engine
 * meet one anyway, its answer is that one too.
 */
const REJECTIONS: Record<RejectReason, { code: ErrorCode; field?: string }> = {
  INVALID_PRICE: { code: 'INVALID_FIELD', field: 'price' },
  INVALID_QUANTITY: { code: 'INVALID_FIELD', field: 'quantity' },
  BELOW_MIN_NOTIONAL: { code: 'BELOW_MIN_NOTIONAL' },
  POST_ONLY_WOULD_TAKE: { code: 'POST_ONLY_WOULD_TAKE' },
  DUPLICATE_ORDER_ID: { code: 'CONFLICT' },
  ORDER_NOT_FOUND: { code: 'NOT_FOUND' },
};

/** The API's error for an order the engine rejected. */
export function engineRejection(orderId: string, reason: RejectReason): KeelError {
  const { code, field } = REJECTIONS[reason];
  return new KeelError(code, `The order was rejected: ${reason}`, { orderId, reason, ...(field && { fields: [{ field, error: `was rejected by the matching engine (${reason})` }] }) });
}
