/** Moves between a wallet's custody (its address) and its trading balance (in the settlement contract). */
export const TradingDirection = {
  DEPOSIT: 'DEPOSIT',
  WITHDRAWAL: 'WITHDRAWAL',
} as const;
export type TradingDirection = (typeof TradingDirection)[keyof typeof TradingDirection];

/**
 * PENDING_APPROVAL: a withdrawal held by requireApprovalForTransfers. PENDING: a deposit sent from
 * the wallet and not yet confirmed, or a withdrawal waiting for the operator. SUBMITTED: the
 * operator's payout is sent. CONFIRMED: final on chain (a deposit is then tradable). FAILED: the
 * chain refused it (the amount is back where it was taken from). REJECTED: an approver refused it.
 */
export const TradingTransferStatus = {
  PENDING_APPROVAL: 'PENDING_APPROVAL',
  PENDING: 'PENDING',
  SUBMITTED: 'SUBMITTED',
  CONFIRMED: 'CONFIRMED',
  FAILED: 'FAILED',
  REJECTED: 'REJECTED',
} as const;
export type TradingTransferStatus = (typeof TradingTransferStatus)[keyof typeof TradingTransferStatus];

/** Outbox events `trading_transfer.<requested|pending_approval|approved|rejected|submitted|confirmed|failed|reorged>` (reorged: a confirmed deposit a deep reorg took off the chain). */
export const TRADING_TRANSFER_EVENT = 'trading_transfer';
export const TRADING_TRANSFER_EVENTS = ['requested', 'pending_approval', 'approved', 'rejected', 'submitted', 'confirmed', 'failed', 'reorged'] as const;
