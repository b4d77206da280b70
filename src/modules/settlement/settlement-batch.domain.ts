/** The settlement batches' vocabulary, as services take and return it; settlement-batch.types.ts registers it for GraphQL (SettlementBatchStatus). */
export const BatchStatus = {
  BATCHED: 'BATCHED',
  SUBMITTED: 'SUBMITTED',
  CONFIRMED: 'CONFIRMED',
  FAILED: 'FAILED',
  REORGED: 'REORGED',
  REPLACED: 'REPLACED',
} as const;
export type BatchStatus = (typeof BatchStatus)[keyof typeof BatchStatus];
