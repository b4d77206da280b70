import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import { batchFactsOf, batchTrades, setBatchTradesStatus } from '../orders';
import type { BatchStatus } from './settlement-batch.domain';


/** A settlement_batches row as the batcher reads it. */
export interface BatchRow {
  id: string;
  blockchainId: string;
  status: BatchStatus;
  parentBatchId: string | null;
  marketIds: string[];
  tradeIds: string[];
  tradeCount: number;
  organizationIds: string[];
  /** Its first trade's settlement key: batches waiting to be sent go in this order (migration 057). */
  firstSettlementKey: string | null;
  fromAddress: string | null;
  nonce: string | null;
  txHash: string | null;
  rawTx: string | null;
  replacedTxHashes: string[];
  gasLimit: string | null;
  maxFeePerGas: string | null;
  maxPriorityFeePerGas: string | null;
  blockNumber: string | null;
  blockHash: string | null;
  gasUsed: string | null;
  feePaid: string | null;
  failureReason: string | null;
  submittedAt: Date | null;
  confirmedAt: Date | null;
  releasedAt: Date | null;
  releaseTxHash: string | null;
  releaseBlockNumber: string | null;
  releaseBlockHash: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Moves a batch from the status the caller read to the next one, compare-and-set, inside the
 * caller's transaction: the batch row, its trades' settlement status (trades follow their batch),
 * the transition's record with its time, and one outbox event per organisation with trades in it.
 * False (and nothing written) when another worker moved the batch first.
 */
export async function transition(
  trx: Knex.Transaction,
  outbox: Outbox,
  batch: BatchRow,
  to: BatchStatus,
  changes: Record<string, unknown> = {},
  detail: string | null = null,
): Promise<boolean> {
  const updated = await trx('settlement_batches')
    .where({ id: batch.id, status: batch.status })
    .update({ ...changes, status: to, updatedAt: trx.fn.now() })
    .returning('*');
  if (!updated.length) return false;
  const row = updated[0] as BatchRow;
  await setBatchTradesStatus(trx, batch.id, to);
  await recordTransition(trx, outbox, row, batch.status, detail);
  return true;
}

/** The record and events of a batch entering its status (also for a batch just created, from null). */
export async function recordTransition(trx: Knex.Transaction, outbox: Outbox, row: BatchRow, from: BatchStatus | null, detail: string | null): Promise<void> {
  await trx('settlement_batch_transitions').insert({ batchId: row.id, fromStatus: from, toStatus: row.status, txHash: row.txHash, detail });
  await outbox.publishMany(
    trx,
    row.organizationIds.map((organizationId) => ({
      organizationId,
      type: `settlement_batch.${row.status.toLowerCase()}`,
      data: {
        batchId: row.id,
        status: row.status,
        previousStatus: from,
        blockchainId: row.blockchainId,
        tradeCount: row.tradeCount,
        txHash: row.txHash,
        blockNumber: row.blockNumber === null ? null : String(row.blockNumber),
        reason: detail,
      },
    })),
  );
}

/** A new batch (BATCHED) of the given trades, in the caller's transaction, with its record and events. */
export async function insertBatch(trx: Knex.Transaction, outbox: Outbox, blockchainId: string, tradeIds: string[], parentBatchId: string | null): Promise<BatchRow> {
  const made = await batchFactsOf(trx, tradeIds);
  const [batch] = await trx('settlement_batches')
    .insert({ id: randomUUID(), blockchainId, status: 'BATCHED', parentBatchId, marketIds: made.markets, tradeIds, tradeCount: tradeIds.length, organizationIds: made.orgs, firstSettlementKey: made.firstKey })
    .returning('*');
  await batchTrades(trx, tradeIds, batch.id);
  await recordTransition(trx, outbox, batch as BatchRow, null, parentBatchId ? `split from batch ${parentBatchId}` : null);
  return batch as BatchRow;
}
