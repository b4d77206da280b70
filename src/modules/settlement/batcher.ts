import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import type { Outbox } from '../../platform/events/outbox';
import { lineHashes, nonceFate } from '../withdrawals/nonce-fate';
import { bumpedFees } from '../withdrawals/fee-bump';
import { BatchRow, BatchStatus, recordTransition, transition } from './batch-transitions';
import { netTrades, NettableTrade } from './netting';
import { ChainDelta, isDefinitiveRefusal, NATIVE_TOKEN, revertReason, settleCalldata } from './settlement-contract';
import type { SettlementDeployment } from './settlement-deployments';
import type { FundingNeed, SettlementFunding } from './funding';
import { walletAccounts } from './wallet-accounts';
import type { ProceedsRelease } from './proceeds-release';

export interface BatcherOptions {
  batchSize: number;
  maxAgeMs: number;
  bumpAfterMs: number;
  bumpPercent: number;
  reorgWindowBlocks: number;
}

/** Statuses of a batch that waits to be (re-)submitted. */
const WAITING: BatchStatus[] = ['BATCHED', 'REORGED', 'REPLACED'];

/** Every transaction hash signed for the batch, oldest first. */
function hashesOf(batch: BatchRow): string[] {
  return lineHashes({ fromAddress: batch.fromAddress ?? '', nonce: batch.nonce, txHash: batch.txHash, replacedTxHashes: batch.replacedTxHashes ?? [] });
}

/** A batch that can never be put on chain as it is (one of its wallets has no address). */
class UnsettleableBatch extends Error {}

interface BatchTrade extends NettableTrade {
  settlementKey: string;
}

/**
 * Settles one chain's trades, one batch in flight at a time (the caller holds the chain's lease):
 *
 * QUEUED trades are gathered by count or age into a batch (BATCHED); the paying wallets fund the
 * contract; the batch is simulated and, if it would revert, FAILED with the reason and split in
 * halves until the failing trade is alone (the rest settle); otherwise it is signed by the operator
 * and sent (SUBMITTED). Mined and as deep as the chain's confirmation count: CONFIRMED, and what
 * the batch's wallets hold in the contract is released back to their addresses. A stuck transaction
 * is signed again with a higher fee (REPLACED, then SUBMITTED with the new hash); a confirmed batch
 * whose block left the chain is REORGED and submitted again (the contract's replay bitmap makes a
 * second inclusion of the old transaction harmless: a trade settles once).
 */
export class SettlementBatcher {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly funding: SettlementFunding,
    private readonly release: ProceedsRelease,
    private readonly options: BatcherOptions,
    private readonly logger: Logger,
  ) {}

  async step(d: SettlementDeployment): Promise<void> {
    const chain = d.network.blockchainId;
    const inFlight = await this.batches(chain, ['SUBMITTED']);
    if (inFlight.length) {
      for (const b of inFlight) await this.follow(d, b);
      return;
    }
    await this.checkReorgs(d);
    // A release the chain refuses (a blacklisted token holder, say) must not stop the chain's batches:
    // it is logged and tried again on the next step, and batching goes on.
    await this.release.releaseFinished(d).catch((e) => this.logger.warn({ blockchainId: chain, err: revertReason(e) }, 'releasing settled proceeds failed; will retry'));
    const [waiting] = await this.batches(chain, WAITING, 1);
    const next = waiting ?? (await this.formBatch(chain));
    if (next) await this.submit(d, next);
  }

  private async batches(blockchainId: string, statuses: BatchStatus[], limit = 10): Promise<BatchRow[]> {
    return this.db('settlement_batches').where({ blockchainId }).whereIn('status', statuses).orderBy([{ column: 'createdAt' }, { column: 'id' }]).limit(limit);
  }

  /** QUEUED trades of the chain's markets, oldest first, into a new batch: when there are enough, or the oldest waited long enough. */
  async formBatch(blockchainId: string, force = false): Promise<BatchRow | null> {
    return this.db.transaction(async (trx) => {
      const { rows } = await trx.raw(
        `SELECT t.id, t.created_at AS "createdAt"
           FROM trades t JOIN markets m ON m.id = t.market_id JOIN assets a ON a.id = m.base_asset_id
          WHERE t.settlement_status = 'QUEUED' AND a.blockchain_id = ?
          ORDER BY t.settlement_key LIMIT ? FOR UPDATE OF t SKIP LOCKED`,
        [blockchainId, this.options.batchSize],
      );
      const trades = rows as { id: string; createdAt: Date }[];
      if (!trades.length) return null;
      const oldest = Math.min(...trades.map((t) => new Date(t.createdAt).getTime()));
      if (!force && trades.length < this.options.batchSize && Date.now() - oldest < this.options.maxAgeMs) return null;
      return this.insertBatch(trx, blockchainId, trades.map((t) => t.id), null);
    });
  }

  private async insertBatch(trx: Knex.Transaction, blockchainId: string, tradeIds: string[], parentBatchId: string | null): Promise<BatchRow> {
    const { rows } = await trx.raw(
      `SELECT array_agg(DISTINCT t.market_id) AS markets, array_agg(DISTINCT o.organization_id) AS orgs
         FROM trades t JOIN orders o ON o.id IN (t.maker_order_id, t.taker_order_id) WHERE t.id = ANY(?::uuid[])`,
      [tradeIds],
    );
    const [batch] = await trx('settlement_batches')
      .insert({ id: randomUUID(), blockchainId, status: 'BATCHED', parentBatchId, marketIds: rows[0].markets, tradeIds, tradeCount: tradeIds.length, organizationIds: rows[0].orgs })
      .returning('*');
    await trx('trades').whereIn('id', tradeIds).update({ settlementBatchId: batch.id, settlementStatus: 'BATCHED' });
    await recordTransition(trx, this.outbox, batch as BatchRow, null, parentBatchId ? `split from batch ${parentBatchId}` : null);
    return batch as BatchRow;
  }

  private async tradesOf(batch: BatchRow): Promise<BatchTrade[]> {
    const rows = await this.db('trades as t')
      .join('markets as m', 'm.id', 't.marketId')
      .join('assets as b', 'b.id', 'm.baseAssetId')
      .join('assets as q', 'q.id', 'm.quoteAssetId')
      .where('t.settlementBatchId', batch.id)
      .orderBy('t.settlementKey')
      .select('t.*', 'b.id as baseId', 'b.decimals as baseDecimals', 'q.id as quoteId', 'q.decimals as quoteDecimals');
    return rows.map((r: Record<string, any>) => ({
      ...(r as BatchTrade),
      settlementKey: String(r.settlementKey),
      base: { id: r.baseId, decimals: r.baseDecimals },
      quote: { id: r.quoteId, decimals: r.quoteDecimals },
    }));
  }

  /** The batch as the contract takes it: trade keys, netted deltas, and what each paying wallet must hold in the contract. */
  async onChainBatch(batch: BatchRow): Promise<{ keys: bigint[]; deltas: ChainDelta[]; needs: FundingNeed[] }> {
    const trades = await this.tradesOf(batch);
    const { deltas } = netTrades(trades);
    const accounts = await walletAccounts(this.db, deltas.map((x) => x.walletId));
    const assets = new Map<string, { address: string; isNative: boolean }>(
      (await this.db('assets').whereIn('id', [...new Set(deltas.map((x) => x.assetId))]).select('id', 'address', 'isNative')).map((a: { id: string; address: string; isNative: boolean }) => [a.id, a]),
    );
    const token = (assetId: string) => {
      const a = assets.get(assetId)!;
      return a.isNative ? NATIVE_TOKEN : ethers.getAddress(a.address);
    };
    const chainDeltas: ChainDelta[] = [];
    const needs: FundingNeed[] = [];
    for (const x of deltas) {
      const account = accounts.get(x.walletId);
      if (!account) throw new UnsettleableBatch(`wallet ${x.walletId} has no address on chain`);
      chainDeltas.push({ account: ethers.getAddress(account.address), token: token(x.assetId), amount: x.amount });
      if (x.amount < 0n) needs.push({ account, assetId: x.assetId, token: token(x.assetId), amount: -x.amount });
    }
    return { keys: trades.map((t) => BigInt(t.settlementKey)), deltas: chainDeltas, needs };
  }

  private async submit(d: SettlementDeployment, batch: BatchRow): Promise<void> {
    const provider = d.network.provider;
    // A batch sent before (re-submitted after a reorg, or re-signed): if one of its transactions made it after all, follow that one.
    for (const hash of hashesOf(batch)) {
      const receipt = await provider.getTransactionReceipt(hash);
      if (receipt && receipt.status === 1) {
        await this.db.transaction((trx) => transition(trx, this.outbox, batch, 'SUBMITTED', { txHash: hash, replacedTxHashes: hashesOf(batch).filter((h) => h !== hash) }, 'an earlier transaction of the batch is on chain'));
        return;
      }
    }
    let onChain: Awaited<ReturnType<SettlementBatcher['onChainBatch']>>;
    try {
      onChain = await this.onChainBatch(batch);
    } catch (e) {
      if (e instanceof UnsettleableBatch) return this.failAndSplit(batch, e.message);
      throw e;
    }
    const { keys, deltas, needs } = onChain;
    await this.funding.fund(d, needs, batch.id);
    const data = settleCalldata(batch.id, keys, deltas);
    const operator = d.operator.address;
    let gas: bigint;
    try {
      gas = await provider.estimateGas({ from: operator, to: d.address, data });
    } catch (e) {
      // Only the contract's refusal fails the batch; a node that cannot be reached is tried again next step.
      if (!isDefinitiveRefusal(e)) throw e;
      return this.failAndSplit(batch, revertReason(e));
    }
    const fees = await provider.getFeeData();
    const nonce = await provider.getTransactionCount(operator, 'pending');
    const signed = ethers.Transaction.from(
      await d.operator.signTransaction({ type: 2, chainId: d.network.spec.chainId, nonce, to: d.address, data, gasLimit: (gas * 12n) / 10n + 20_000n, maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }),
    );
    // Recorded before it is broadcast: every hash that might be mined is known.
    const moved = await this.db.transaction((trx) =>
      transition(trx, this.outbox, batch, 'SUBMITTED', {
        fromAddress: operator,
        nonce,
        txHash: signed.hash,
        rawTx: signed.serialized,
        replacedTxHashes: hashesOf(batch),
        gasLimit: signed.gasLimit.toString(),
        maxFeePerGas: signed.maxFeePerGas!.toString(),
        maxPriorityFeePerGas: signed.maxPriorityFeePerGas!.toString(),
        blockNumber: null,
        blockHash: null,
        submittedAt: this.db.fn.now(),
      }),
    );
    if (!moved) return;
    await provider.broadcastTransaction(signed.serialized).catch((e) => this.logger.warn({ batchId: batch.id, err: revertReason(e) }, 'settlement broadcast failed; will retry'));
  }

  /** A batch that would revert (or did): FAILED with the reason, its trades split into two new batches, or FAILED when alone. */
  private async failAndSplit(batch: BatchRow, reason: string, changes: Record<string, unknown> = {}): Promise<void> {
    await this.db.transaction(async (trx) => {
      const trades: { id: string }[] = await trx('trades').where({ settlementBatchId: batch.id }).orderBy('settlementKey').select('id').forUpdate();
      if (!(await transition(trx, this.outbox, batch, 'FAILED', { ...changes, failureReason: reason }, reason))) return;
      if (trades.length < 2) return;
      const half = Math.ceil(trades.length / 2);
      for (const part of [trades.slice(0, half), trades.slice(half)]) await this.insertBatch(trx, batch.blockchainId, part.map((t) => t.id), batch.id);
    });
    this.logger.warn({ batchId: batch.id, trades: batch.tradeCount, reason }, batch.tradeCount > 1 ? 'settlement batch failed: split to isolate the failing trade' : 'settlement of a trade failed');
  }

  private async follow(d: SettlementDeployment, batch: BatchRow): Promise<void> {
    const provider = d.network.provider;
    const fate = await nonceFate(provider, d.network.spec.confirmations, { fromAddress: batch.fromAddress!, nonce: batch.nonce, txHash: batch.txHash, replacedTxHashes: batch.replacedTxHashes });
    if (fate.kind === 'taken') {
      await this.db.transaction((trx) => transition(trx, this.outbox, batch, 'REPLACED', {}, `nonce ${batch.nonce} was used by another transaction: signed again`));
      return;
    }
    if (fate.kind === 'mined') {
      const r = fate.receipt;
      const mined = { txHash: r.hash, replacedTxHashes: hashesOf(batch).filter((h) => h !== r.hash), blockNumber: r.blockNumber, blockHash: r.blockHash, gasUsed: r.gasUsed.toString(), feePaid: (r.gasUsed * r.gasPrice).toString() };
      if (r.status !== 1) return this.failAndSplit(batch, await this.minedRevertReason(d, batch, r), mined);
      const head = await provider.getBlockNumber();
      if (head - r.blockNumber + 1 < d.network.spec.confirmations) return;
      await this.db.transaction((trx) => transition(trx, this.outbox, batch, 'CONFIRMED', { ...mined, confirmedAt: this.db.fn.now(), releasedAt: null }));
      return;
    }
    if (!(await provider.getTransaction(batch.txHash!))) {
      await provider.broadcastTransaction(batch.rawTx!).catch((e) => this.logger.warn({ batchId: batch.id, err: revertReason(e) }, 'settlement re-broadcast failed; will retry'));
      return;
    }
    if (Date.now() - new Date(batch.submittedAt!).getTime() > this.options.bumpAfterMs) await this.bump(d, batch);
  }

  /** Re-signs a stuck, underpriced batch with the same nonce and a higher fee: REPLACED, then SUBMITTED with the new hash. */
  private async bump(d: SettlementDeployment, batch: BatchRow): Promise<void> {
    const bumped = await bumpedFees(d.network.provider, { maxFeePerGas: BigInt(batch.maxFeePerGas!), maxPriorityFeePerGas: BigInt(batch.maxPriorityFeePerGas!) }, this.options.bumpPercent);
    if (!bumped) return;
    const old = ethers.Transaction.from(batch.rawTx!);
    const signed = ethers.Transaction.from(
      await d.operator.signTransaction({ type: 2, chainId: d.network.spec.chainId, nonce: old.nonce, to: old.to, data: old.data, gasLimit: old.gasLimit, ...bumped }),
    );
    const moved = await this.db.transaction(async (trx) => {
      if (!(await transition(trx, this.outbox, batch, 'REPLACED', {}, `transaction ${batch.txHash} stuck below the market fee: replaced by ${signed.hash}`))) return false;
      const replaced = { ...batch, status: 'REPLACED' as const };
      return transition(trx, this.outbox, replaced, 'SUBMITTED', {
        txHash: signed.hash,
        rawTx: signed.serialized,
        replacedTxHashes: hashesOf(batch),
        maxFeePerGas: bumped.maxFeePerGas.toString(),
        maxPriorityFeePerGas: bumped.maxPriorityFeePerGas.toString(),
        submittedAt: this.db.fn.now(),
      });
    });
    if (!moved) return;
    this.logger.info({ batchId: batch.id, replaced: batch.txHash, by: signed.hash }, 'settlement fee bumped');
    await d.network.provider.broadcastTransaction(signed.serialized).catch((e) => this.logger.warn({ batchId: batch.id, err: revertReason(e) }, 'settlement fee bump broadcast failed; will retry'));
  }

  /** Why a mined transaction reverted: the same call replayed at its block's parent state. */
  private async minedRevertReason(d: SettlementDeployment, batch: BatchRow, r: ethers.TransactionReceipt): Promise<string> {
    try {
      const tx = ethers.Transaction.from(batch.rawTx!);
      await d.network.provider.call({ from: batch.fromAddress!, to: tx.to!, data: tx.data, blockTag: r.blockNumber - 1 });
      return 'the transaction reverted on chain';
    } catch (e) {
      return revertReason(e);
    }
  }

  /** Confirmed batches within the reorg window whose transaction is no longer where it was mined: REORGED, to be sent again. */
  private async checkReorgs(d: SettlementDeployment): Promise<void> {
    const head = await d.network.provider.getBlockNumber();
    const recent: BatchRow[] = await this.db('settlement_batches')
      .where({ blockchainId: d.network.blockchainId, status: 'CONFIRMED' })
      .where('blockNumber', '>', head - this.options.reorgWindowBlocks)
      // Batches confirmed before the contract was (re)deployed belong to a chain that was reset, not reorganised.
      .where('confirmedAt', '>=', d.since)
      .orderBy('blockNumber', 'desc');
    for (const batch of recent) {
      const receipt = await d.network.provider.getTransactionReceipt(batch.txHash!);
      if (receipt && receipt.blockHash === batch.blockHash) continue;
      const block = receipt ? await d.network.provider.getBlock(receipt.blockNumber) : null;
      if (receipt && block?.hash === receipt.blockHash && receipt.blockHash !== batch.blockHash) {
        // Re-mined in another block of the new chain: still settled, once; follow it there.
        await this.db.transaction((trx) => transition(trx, this.outbox, batch, 'REORGED', {}, `block ${batch.blockNumber} ${batch.blockHash} left the chain; the transaction is in block ${receipt.blockNumber}`));
        continue;
      }
      await this.db.transaction((trx) => transition(trx, this.outbox, batch, 'REORGED', {}, `block ${batch.blockNumber} ${batch.blockHash} left the canonical chain`));
      await this.funding.refundDropped(d, batch.id);
      this.logger.warn({ batchId: batch.id, block: batch.blockNumber }, 'settlement batch reorged: it will be submitted again');
    }
  }
}
