import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import { BatchRow, insertBatch, transition } from './batch-transitions';

/** A wallet whose funding of the contract the chain refused, and why. */
export interface RefusedFunding {
  walletId: string;
  token: string;
  reason: string;
  /** Not refused: a funding transaction of the wallet is not mined yet. Its trades wait without counting an attempt. */
  pending?: boolean;
}

export interface FundingRetryOptions {
  /** The first wait before a refused wallet's trades are batched again; doubled per attempt (at most an hour). */
  fundingRetryBaseMs: number;
  /** Refusals of a trade's funding before it is FAILED for good. */
  fundingMaxAttempts: number;
}

const MAX_WAIT_MS = 3_600_000;

/**
 * A batch whose funding the chain refused, which may pass (a wallet without coin for gas is topped
 * up later): FAILED with the reason, and its trades queued again instead of failed. The trades of a
 * refused wallet count an attempt and wait before they are batched again; at the last attempt they
 * are FAILED for good, alone in a batch of their own that says why. The trades of a wallet whose
 * funding is only pending (a transaction not mined yet) wait once as long, without an attempt. The other trades are batched
 * again at once, without them. In the caller's transaction; false when another worker moved the batch first.
 */
export async function requeueRefusedFunding(trx: Knex.Transaction, outbox: Outbox, batch: BatchRow, refused: RefusedFunding[], options: FundingRetryOptions): Promise<boolean> {
  const wallets = new Set(refused.map((r) => r.walletId));
  const reason = `the chain refused funding from wallet ${refused.map((r) => `${r.walletId} (${r.reason})`).join(', ')}`.slice(0, 1000);
  const trades: { id: string; makerWalletId: string; takerWalletId: string; settlementAttempts: number }[] = await trx('trades').where({ settlementBatchId: batch.id }).forUpdate();
  if (!(await transition(trx, outbox, batch, 'FAILED', { failureReason: reason }, `${reason}: its trades are queued again`))) return false;
  const queued = { settlementStatus: 'QUEUED', settlementBatchId: null };
  const isTouched = (t: (typeof trades)[number]) => wallets.has(t.makerWalletId) || wallets.has(t.takerWalletId);
  const touched = trades.filter(isTouched);
  const others = trades.filter((t) => !isTouched(t)).map((t) => t.id);
  if (others.length) await trx('trades').whereRaw('id = ANY(?::uuid[])', [others]).update(queued);
  // One statement per attempt count (which sets the wait), not per trade: a refused batch may hold thousands.
  // A trade whose attempt is not counted (funding only pending) keeps its count: key undefined.
  const byAttempts = new Map<number | undefined, string[]>();
  const exhausted: string[] = [];
  const counted = new Set(refused.filter((r) => !r.pending).map((r) => r.walletId));
  for (const t of touched) {
    const attempts = counted.has(t.makerWalletId) || counted.has(t.takerWalletId) ? t.settlementAttempts + 1 : undefined;
    if (attempts !== undefined && attempts >= options.fundingMaxAttempts) exhausted.push(t.id);
    const ids = byAttempts.get(attempts) ?? [];
    ids.push(t.id);
    byAttempts.set(attempts, ids);
  }
  for (const [attempts, ids] of byAttempts) {
    const waitMs = attempts === undefined ? options.fundingRetryBaseMs : Math.min(options.fundingRetryBaseMs * 2 ** (attempts - 1), MAX_WAIT_MS);
    const retryAt = { settlementRetryAt: trx.raw(`now() + ? * interval '1 millisecond'`, [waitMs]) };
    await trx('trades').whereRaw('id = ANY(?::uuid[])', [ids]).update(Object.assign({}, queued, retryAt, attempts === undefined ? {} : { settlementAttempts: attempts }));
  }
  if (exhausted.length) {
    const alone = await insertBatch(trx, outbox, batch.blockchainId, exhausted, batch.id);
    const final = `funding refused ${options.fundingMaxAttempts} times; ${reason}`.slice(0, 1000);
    await transition(trx, outbox, alone, 'FAILED', { failureReason: final }, final);
  }
  return true;
}
