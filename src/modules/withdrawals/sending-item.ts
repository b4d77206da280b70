import type { Knex } from 'knex';
import type { LineCall } from './transaction-request';

/** A line of a transfer as the sender works on it (transfer_items joined with its transfer). */
export interface SendingItem extends LineCall {
  id: string;
  transferId: string;
  organizationId: string;
  masterWalletId: string;
  addressId: string | null;
  blockchainId: string;
  fromAddress: string;
  kind: string;
  assetId: string;
  recipient: string;
  rawAmount: string;
  /** The NFT the line sends (decimal); null for a fungible line. */
  tokenId: string | null;
  status: string;
  nonce: string | null;
  txHash: string | null;
  rawTx: string | null;
  gasLimit: string | null;
  maxFeePerGas: string | null;
  maxPriorityFeePerGas: string | null;
  replacedTxHashes: string[];
  submittedAt: Date | null;
  /** The block the line's transaction was seen mined in: recorded before it is final, cleared if a reorg drops it. */
  blockNumber: string | null;
  updatedAt: Date;
  /** Why the line failed, once it has. */
  error?: string | null;
  /** What the transaction paid in wei once mined: gas used × effective price (and an OP-stack rollup's L1 data fee). */
  feePaid?: string | null;
  /** When an administrator asked for the line's transfer to be cancelled (null: never). */
  cancelRequestedAt?: Date | null;
  /** The zero-value transactions to itself signed at the line's nonce to cancel it (also among its hashes). */
  cancelTxHashes?: string[];
}

/** Told when a line is signed and when it is final, inside the transaction that records it (the trading ledger refunds failures). */
export interface TransferOutcomeListener {
  /** The line was signed (its nonce and transaction hash are recorded), in the same transaction. */
  signed?(trx: Knex.Transaction, item: SendingItem): Promise<void>;
  executed?(trx: Knex.Transaction, item: SendingItem): Promise<void>;
  failed?(trx: Knex.Transaction, item: SendingItem): Promise<void>;
}

/** Its transfer is to be cancelled: not signed if it is not yet, else its nonce taken by a cancellation. */
export const cancelRequested = (item: Pick<SendingItem, 'cancelRequestedAt'>): boolean => item.cancelRequestedAt != null;

/** The line's transaction in force is a cancellation (see TransactionSender.cancel). */
export const cancelling = (item: Pick<SendingItem, 'txHash' | 'cancelTxHashes'>): boolean => item.txHash !== null && (item.cancelTxHashes ?? []).includes(item.txHash);

/** The block a line was recorded as seen mined in, as a number (null: none). */
export const recordedBlock = (item: Pick<SendingItem, 'blockNumber'>): number | null => (item.blockNumber === null ? null : Number(item.blockNumber));

/**
 * Moves a line on from the status and transaction hash a sender read (and, given them, the replaced
 * hashes it read), and only from them. False when another sender moved it first: the caller must
 * then stop, as what it read is stale.
 */
export async function moveLine(db: Knex | Knex.Transaction, item: Pick<SendingItem, 'id' | 'status' | 'txHash'>, changes: Record<string, unknown>, replacedTxHashes?: string[]): Promise<boolean> {
  const updated = await db('transfer_items')
    .where({ id: item.id, status: item.status })
    .where((q) => (item.txHash === null ? q.whereNull('txHash') : q.where('txHash', item.txHash)))
    .modify((q) => (replacedTxHashes ? q.whereRaw('replaced_tx_hashes = ?::text[]', [replacedTxHashes]) : q))
    .update({ ...changes, updatedAt: db.fn.now() });
  return updated > 0;
}
