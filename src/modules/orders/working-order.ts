import type { EngineEvent, RejectReason } from '../../engine';
import type { StepResult } from '../../platform/db/unit-of-work';
import type { OrderModel } from './order.model';
import { OrderSide, OrderStatus } from './order.domain';

/** An order a command touches, with its money state as the command changes it. */
export interface Working {
  id: string;
  isNew: boolean;
  organizationId: string;
  walletId: string;
  side: OrderSide;
  /** A LIMIT order's price in ticks (what each unfilled lot of a BUY must still be able to pay); null for a MARKET order. */
  priceTicks: bigint | null;
  lockAssetId: string | null;
  lockedAmount: bigint;
  remainingLots: bigint;
  filledLots: bigint;
  filledNotional: bigint;
  feesPaid: bigint;
  status: OrderStatus;
  statusReason: string | null;
  restSequence: number | null;
}

/** A live order's record as the runtime works with it. */
export function workingFromRow(r: OrderModel): Working {
  return {
    id: r.id,
    isNew: false,
    organizationId: r.organizationId,
    walletId: r.walletId,
    side: r.side as OrderSide,
    priceTicks: r.priceTicks === null ? null : BigInt(r.priceTicks),
    lockAssetId: r.lockAssetId,
    lockedAmount: BigInt(r.lockedAmount),
    remainingLots: BigInt(r.remainingLots),
    filledLots: BigInt(r.filledLots),
    filledNotional: BigInt(r.filledNotional),
    feesPaid: BigInt(r.feesPaid),
    status: r.status as OrderStatus,
    statusReason: r.statusReason,
    restSequence: r.restSequence === null ? null : Number(r.restSequence),
  };
}

/** A new order as it enters the engine: nothing filled yet, locking `lock` of `lockAssetId` (nothing if the engine rejected it). */
export function newWorking(order: { id: string; organizationId: string; walletId: string; side: OrderSide; priceTicks: bigint | null; lots: bigint; lockAssetId: string; lock: bigint; rejected: boolean }): Working {
  return {
    id: order.id,
    isNew: true,
    organizationId: order.organizationId,
    walletId: order.walletId,
    side: order.side,
    priceTicks: order.priceTicks,
    lockAssetId: order.rejected ? null : order.lockAssetId,
    lockedAmount: order.rejected ? 0n : order.lock,
    remainingLots: order.lots,
    filledLots: 0n,
    filledNotional: 0n,
    feesPaid: 0n,
    status: OrderStatus.OPEN,
    statusReason: null,
    restSequence: null,
  };
}

/** Whether an order in this state rests in the book. */
export function isResting(w: Working): boolean {
  return (w.status === OrderStatus.OPEN || w.status === OrderStatus.PARTIALLY_FILLED) && w.restSequence !== null;
}

export interface NewOrder {
  working: Working;
  row: Partial<OrderModel>;
  lock: bigint;
}

/** One command matched in memory, waiting for its commit. */
export interface Matched {
  events: EngineEvent[];
  order: NewOrder | null;
  rejected?: RejectReason;
  /** The request's idempotency step this command completes, and the result recorded for it. */
  record?: StepResult;
}
