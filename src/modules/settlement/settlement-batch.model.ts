import { Model } from 'objection';

/** A settlement batch (table settlement_batches); see batch-transitions.ts for its statuses. */
export class SettlementBatchModel extends Model {
  static override tableName = 'settlement_batches';
  id!: string;
  blockchainId!: string;
  status!: string;
  parentBatchId!: string | null;
  marketIds!: string[];
  tradeIds!: string[];
  tradeCount!: number;
  txHash!: string | null;
  replacedTxHashes!: string[];
  blockNumber!: string | null;
  blockHash!: string | null;
  gasUsed!: string | null;
  feePaid!: string | null;
  failureReason!: string | null;
  submittedAt!: Date | null;
  confirmedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}

/** One status change of a batch (table settlement_batch_transitions). */
export class SettlementBatchTransitionModel extends Model {
  static override tableName = 'settlement_batch_transitions';
  id!: string;
  batchId!: string;
  fromStatus!: string | null;
  toStatus!: string;
  txHash!: string | null;
  detail!: string | null;
  at!: Date;
}
