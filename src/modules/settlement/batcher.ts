import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import { FailpointCrash, type Failpoints } from '../../platform/failpoints';
import type { Outbox } from '../../platform/events/outbox';
import { assetIdsOnChain, assetsById } from '../chains';
import { marketIdsWithBaseIn } from '../markets';
import { batchHoldsTrades, batchTradeIds, batchTrades, queuedTrades } from '../orders';
import { lineHashes, nonceFate } from '../../platform/chain-port/evm-transactions';
import { BatchRow, insertBatch, transition } from './batch-transitions';
import type { BatchStatus } from './settlement-batch.domain';
import { netTrades } from './netting';
import { SettlementTrade, settlementTrades, toSettlementTrade } from './unsettled-trades';
import { ChainDelta, isDefinitiveRefusal, NATIVE_TOKEN, readTokenSlots, revertReason, settleCalldata } from './settlement-contract';
import type { SettlementDeployment } from './settlement-deployments';
import { walletAccounts } from '../wallets';
import { whereMined } from './where-mined';
import { feeBumped, type FeeBumpOptions } from './fee-bump';
import { Fence, fencedTransaction, LeaseLost, UNFENCED } from './chain-lease';
import type { TradingWithdrawalSender } from './trading-withdrawal-sender';

export interface BatcherOptions extends FeeBumpOptions {
  batchSize: number;
  maxAgeMs: number;
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


/**
 * Settles one chain's trades, one batch in flight at a time (the caller holds the chain's lease, and
 * every state change here commits only while it still does):
 *
 * QUEUED trades are gathered by count or age into a batch (BATCHED). The wallets' trading balances
 * are already in the contract (orders are admitted only against them), so the batch is one operator
 * call, `settle`, that moves balances inside the contract: no wallet sends anything. The batch is
 * simulated and, if it would revert, FAILED with the reason and split in halves until the failing
 * trade is alone (the rest settle); otherwise it is signed by the operator and sent (SUBMITTED).
 * Mined and as deep as the chain's confirmation count: CONFIRMED; reverted, as deep: FAILED and split
 * the same way, unless the contract's token slots changed under it (then encoded again and signed
 * again, REPLACED). The same step pays out the
 * trading withdrawals (TradingWithdrawalSender), also operator transactions. A stuck transaction
 * is signed again with a higher fee (REPLACED, then SUBMITTED with the new hash); a batch confirmed,
 * or failed because its transaction reverted, whose block left the chain is REORGED and submitted
 * again (the contract's replay bitmap makes a second inclusion of the old transaction harmless: a
 * trade settles once; see checkReorgs for a failed batch that was split).
 */
export class SettlementBatcher {
  /** Per chain, the head whose confirmed batches were last checked for a reorg: unchanged, nothing to look at. */
  private readonly checkedHeads = new Map<string, string>();

  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly withdrawals: TradingWithdrawalSender,
    private readonly options: BatcherOptions,
    private readonly logger: Logger,
    private readonly failpoints?: Failpoints,
  ) {}

  /** One step under the chain's lease: renewed between phases, held by every state change (LeaseLost ends the step). */
  async step(d: SettlementDeployment, lease: Fence): Promise<void> {
    const chain = d.network.blockchainId;
    const open = await this.openWork(chain);
    // Withdrawals from trading are paid out whatever the batches do; one the chain refuses is failed
    // and refunded there, and trouble reaching the node must not stop the batches either.
    if (open.withdrawals) {
      await this.withdrawals.step(d, lease).catch((e) => {
        if (e instanceof LeaseLost || e instanceof FailpointCrash) throw e;
        this.logger.warn({ blockchainId: chain, err: e }, 'trading withdrawals: step failed; will retry');
      });
    }
    await this.withdrawals.checkReorgs(d, lease).catch((e) => {
      if (e instanceof LeaseLost || e instanceof FailpointCrash) throw e;
      this.logger.warn({ blockchainId: chain, err: e }, 'trading withdrawals: reorg check failed; will retry');
    });
    const inFlight = open.submitted ? await this.batches(chain, ['SUBMITTED']) : [];
    if (inFlight.length) {
      for (const b of inFlight) await this.follow(d, b, lease);
      return;
    }
    const reorged = await this.checkReorgs(d, lease);
    await lease.renew();
    const [waiting] = open.waiting || reorged ? await this.batches(chain, WAITING, 1) : [];
    const next = waiting ?? (await this.formBatch(chain, false, lease));
    if (next) await this.submit(d, next, lease);
  }

  /** What the chain has open, in one look at the open rows' indexes: what a step with nothing open skips. */
  private async openWork(blockchainId: string): Promise<{ withdrawals: boolean; submitted: boolean; waiting: boolean }> {
    const { rows } = await this.db.raw(
      `SELECT EXISTS (SELECT 1 FROM trading_transfers WHERE blockchain_id = :chain AND direction = 'WITHDRAWAL' AND status IN ('PENDING', 'SUBMITTED')) AS withdrawals,
              EXISTS (SELECT 1 FROM settlement_batches WHERE blockchain_id = :chain AND status = 'SUBMITTED') AS submitted,
              EXISTS (SELECT 1 FROM settlement_batches WHERE blockchain_id = :chain AND status = ANY(:waiting)) AS waiting`,
      { chain: blockchainId, waiting: WAITING },
    );
    return rows[0];
  }

  private fenced<T>(lease: Fence, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return fencedTransaction(this.db, lease, work);
  }

  /**
   * In the order of their trades: a trade may spend what an earlier one brought, and sent before it
   * would fail alone, for good. A batch with no first key (confirmed before migration 057, reorged
   * since, or made by a worker of the build before during a rolling deploy) is older than any with one.
   */
  private async batches(blockchainId: string, statuses: BatchStatus[], limit = 10): Promise<BatchRow[]> {
    return this.db('settlement_batches').where({ blockchainId }).whereIn('status', statuses).orderBy([{ column: 'firstSettlementKey', nulls: 'first' }, { column: 'createdAt' }, { column: 'id' }]).limit(limit);
  }

  /** QUEUED trades of the chain's markets, oldest first, into a new batch: when there are enough, or the oldest waited long enough. */
  async formBatch(blockchainId: string, force = false, lease: Fence = UNFENCED): Promise<BatchRow | null> {
    // One statement: the queue of the markets whose base asset is on the chain.
    const queue = (db: Knex | Knex.Transaction) => queuedTrades(db, marketIdsWithBaseIn(db, assetIdsOnChain(db, blockchainId)), this.options.batchSize);
    const due = (trades: { createdAt: Date }[]) =>
      trades.length > 0 && (force || trades.length >= this.options.batchSize || Date.now() - Math.min(...trades.map((t) => new Date(t.createdAt).getTime())) >= this.options.maxAgeMs);
    // A look first, outside any transaction: a step with no batch to form opens none.
    if (!due(await queue(this.db))) return null;
    return this.fenced(lease, async (trx) => {
      const trades = await queue(trx);
      return due(trades) ? insertBatch(trx, this.outbox, blockchainId, trades.map((t) => t.id), null) : null;
    });
  }

  /** The batch as the contract takes it: trade keys and netted deltas. */
  async onChainBatch(batch: BatchRow): Promise<{ keys: bigint[]; deltas: ChainDelta[] }> {
    const trades: SettlementTrade[] = (await settlementTrades(this.db).where('t.settlementBatchId', batch.id)).map(toSettlementTrade);
    const deltas = netTrades(trades);
    const accounts = await walletAccounts(this.db, deltas.map((x) => x.walletId));
    const assets = new Map<string, { address: string; isNative: boolean }>(
      (await assetsById(this.db, deltas.map((x) => x.assetId))).map((a) => [a.id, a]),
    );
    const token = (assetId: string) => {
      const a = assets.get(assetId)!;
      return a.isNative ? NATIVE_TOKEN : ethers.getAddress(a.address);
    };
    const chainDeltas: ChainDelta[] = [];
    for (const x of deltas) {
      const account = accounts.get(x.walletId);
      if (!account) throw new UnsettleableBatch(`wallet ${x.walletId} has no address on chain`);
      chainDeltas.push({ account: ethers.getAddress(account.address), token: token(x.assetId), amount: x.amount });
    }
    return { keys: trades.map((t) => BigInt(t.settlementKey)), deltas: chainDeltas };
  }

  private async submit(d: SettlementDeployment, batch: BatchRow, lease: Fence): Promise<void> {
    const provider = d.network.provider;
    if (await this.minedEarlier(d, batch, lease)) return;
    if (await this.holdsNoTrades(batch)) return this.resendOrFailWithoutTrades(d, batch, lease);
    let onChain: Awaited<ReturnType<SettlementBatcher['onChainBatch']>>;
    try {
      onChain = await this.onChainBatch(batch);
    } catch (e) {
      if (e instanceof UnsettleableBatch) return this.failAndSplit(batch, e.message, lease);
      throw e;
    }
    const { keys, deltas } = onChain;
    // A reorged batch whose nonce is the operator's next again goes out as its own transaction.
    // Not simulated first: a node simulates on its pending state, where that very transaction may
    // wait already and would read as a replay.
    if (await this.resendAfterReorg(d, batch, lease)) return;
    // Read at every batch, not cached: the contract checks the token pairs a batch names, so an index a deep reorg gave away fails the batch instead of moving the wrong token.
    const where = await readTokenSlots(provider, d.address, deltas.map((x) => x.token));
    const unknown = deltas.find((x) => !where.indices.has(x.token));
    if (unknown) return this.failAndSplit(batch, `the settlement contract has never received token ${unknown.token}`, lease);
    await lease.renew();
    const data = settleCalldata(batch.id, keys, deltas, where);
    const operator = d.operator.address;
    let gas: bigint;
    try {
      gas = await provider.estimateGas({ from: operator, to: d.address, data });
    } catch (e) {
      // Only the contract's refusal fails the batch; a node that cannot be reached is tried again next step.
      if (!isDefinitiveRefusal(e)) throw e;
      // The replay bitmap refuses a batch whose earlier transaction was mined since the check above.
      if (await this.minedEarlier(d, batch, lease)) return;
      return this.failAndSplit(batch, revertReason(e), lease);
    }
    const fees = await provider.getFeeData();
    const nonce = await provider.getTransactionCount(operator, 'pending');
    const signed = ethers.Transaction.from(
      await d.operator.signTransaction({ type: 2, chainId: d.network.spec.chainId, nonce, to: d.address, data, gasLimit: (gas * 12n) / 10n + 20_000n, maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }),
    );
    // Recorded before it is broadcast: every hash that might be mined is known.
    const moved = await this.fenced(lease, (trx) =>
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
    this.failpoints?.hit('after-commit:settlement.batch-signed');
    await lease.renew();
    await provider.broadcastTransaction(signed.serialized).catch((e) => this.logger.warn({ batchId: batch.id, err: e }, 'settlement broadcast failed; will retry'));
  }

  /** A batch sent before (re-submitted after a reorg, or re-signed): if one of its transactions made it after all, it follows that one (true). */
  private async minedEarlier(d: SettlementDeployment, batch: BatchRow, lease: Fence): Promise<boolean> {
    for (const hash of hashesOf(batch)) {
      const receipt = await d.network.provider.getTransactionReceipt(hash);
      if (receipt && receipt.status === 1) {
        await this.fenced(lease, (trx) => transition(trx, this.outbox, batch, 'SUBMITTED', { txHash: hash, replacedTxHashes: hashesOf(batch).filter((h) => h !== hash) }, 'an earlier transaction of the batch is on chain'));
        return true;
      }
    }
    return false;
  }

  /**
   * A reorged batch whose nonce is the operator's next again on the new chain is sent again as the
   * same signed transaction, never as a new one: its old transaction may still be in a node's pool,
   * and two transactions of one nonce can never both be mined (a second, with another nonce, would
   * revert on the replay bitmap and read as a failed batch whose trades did settle). Behind a gap
   * (an earlier operator transaction gone with the reorg) it would wait forever: it is signed
   * again at the next nonce instead, ahead of the old one, which then can only revert.
   */
  private async resendAfterReorg(d: SettlementDeployment, batch: BatchRow, lease: Fence): Promise<boolean> {
    if (batch.status !== 'REORGED' || !batch.rawTx || !batch.fromAddress || batch.nonce === null) return false;
    const used = await d.network.provider.getTransactionCount(batch.fromAddress, 'latest');
    if (used !== Number(batch.nonce)) return false;
    const moved = await this.fenced(lease, (trx) =>
      transition(trx, this.outbox, batch, 'SUBMITTED', { blockNumber: null, blockHash: null, submittedAt: this.db.fn.now() }, `nonce ${batch.nonce} is free again: its transaction ${batch.txHash} is sent again`),
    );
    if (!moved) return true;
    await lease.renew();
    await d.network.provider.broadcastTransaction(batch.rawTx).catch((e) => this.logger.warn({ batchId: batch.id, err: e }, 'settlement re-broadcast after a reorg failed; will retry'));
    return true;
  }

  /**
   * A batch that would revert (or did): FAILED with the reason, its trades split into two new batches, or FAILED when alone.
   * Only a batch whose transaction reverted on chain keeps a block (`changes`, from reverted()): checkReorgs looks at it
   * again; one refused before it was mined has none (a reorged batch's former block is cleared).
   */
  private async failAndSplit(batch: BatchRow, reason: string, lease: Fence, changes: Record<string, unknown> = { blockNumber: null, blockHash: null }): Promise<void> {
    await this.fenced(lease, async (trx) => {
      const trades = await batchTradeIds(trx, batch.id);
      if (!(await transition(trx, this.outbox, batch, 'FAILED', { ...changes, failureReason: reason }, reason))) return;
      if (trades.length < 2) return;
      const half = Math.ceil(trades.length / 2);
      for (const part of [trades.slice(0, half), trades.slice(half)]) await insertBatch(trx, this.outbox, batch.blockchainId, part, batch.id);
    });
    this.logger.warn({ batchId: batch.id, trades: batch.tradeCount, reason }, batch.tradeCount > 1 ? 'settlement batch failed: split to isolate the failing trade' : 'settlement of a trade failed');
  }

  private async follow(d: SettlementDeployment, batch: BatchRow, lease: Fence): Promise<void> {
    const provider = d.network.provider;
    const fate = await nonceFate(provider, d.network.spec.confirmations, { fromAddress: batch.fromAddress!, nonce: batch.nonce, txHash: batch.txHash, replacedTxHashes: batch.replacedTxHashes });
    if (fate.kind === 'taken') {
      await this.fenced(lease, (trx) => transition(trx, this.outbox, batch, 'REPLACED', {}, `nonce ${batch.nonce} was used by another transaction (${fate.by}): signed again`));
      return;
    }
    if (fate.kind === 'undecided') return void this.logger.warn({ batchId: batch.id, reason: fate.reason }, 'settlement batch: its nonce is used, by which transaction the node does not show yet; it waits');
    if (fate.kind === 'mined') {
      const r = fate.receipt;
      // Acted on only as deep as the confirmation count, reverted or not: a reorganisation may mine
      // the same signed transaction in another block, where it may go the other way.
      const head = await provider.getBlockNumber();
      if (head - r.blockNumber + 1 < d.network.spec.confirmations) return;
      const mined = { txHash: r.hash, replacedTxHashes: hashesOf(batch).filter((h) => h !== r.hash), blockNumber: r.blockNumber, blockHash: r.blockHash, gasUsed: r.gasUsed.toString(), feePaid: r.fee.toString() };
      if (r.status !== 1) return this.reverted(d, batch, r, mined, lease);
      await this.fenced(lease, async (trx) => {
        // A batch split after its transaction reverted, mined again after a reorg and settled this time: its transaction settled
        // every trade it was signed with, so they are its again (the parts' transactions can only revert: a trade settles once).
        if (await this.holdsNoTrades(batch, trx)) await batchTrades(trx, batch.tradeIds, batch.id);
        await transition(trx, this.outbox, batch, 'CONFIRMED', { ...mined, confirmedAt: this.db.fn.now() });
      });
      // A head checked before this batch was confirmed says nothing of it: a chain rewound to that very head must be checked again.
      this.checkedHeads.delete(d.network.blockchainId);
      return;
    }
    if (!(await provider.getTransaction(batch.txHash!))) {
      await lease.renew();
      await provider.broadcastTransaction(batch.rawTx!).catch((e) => this.logger.warn({ batchId: batch.id, err: e }, 'settlement re-broadcast failed; will retry'));
      return;
    }
    const signed = await feeBumped(d, { rawTx: batch.rawTx!, submittedAt: batch.submittedAt! }, this.options);
    if (signed) await this.replace(d, batch, signed, lease);
  }

  /** A stuck, underpriced batch signed again at its nonce with a higher fee (feeBumped): REPLACED, then SUBMITTED with the new hash. */
  private async replace(d: SettlementDeployment, batch: BatchRow, signed: ethers.Transaction, lease: Fence): Promise<void> {
    const moved = await this.fenced(lease, async (trx) => {
      if (!(await transition(trx, this.outbox, batch, 'REPLACED', {}, `transaction ${batch.txHash} stuck below the market fee: replaced by ${signed.hash}`))) return false;
      const replaced = { ...batch, status: 'REPLACED' as const };
      return transition(trx, this.outbox, replaced, 'SUBMITTED', {
        txHash: signed.hash,
        rawTx: signed.serialized,
        replacedTxHashes: hashesOf(batch),
        maxFeePerGas: signed.maxFeePerGas!.toString(),
        maxPriorityFeePerGas: signed.maxPriorityFeePerGas!.toString(),
        submittedAt: this.db.fn.now(),
      });
    });
    if (!moved) return;
    this.logger.info({ batchId: batch.id, replaced: batch.txHash, by: signed.hash }, 'settlement fee bumped');
    await lease.renew();
    await d.network.provider.broadcastTransaction(signed.serialized).catch((e) => this.logger.warn({ batchId: batch.id, err: e }, 'settlement fee bump broadcast failed; will retry'));
  }

  /**
   * A batch whose transaction reverted on chain (as deep as the confirmation count). The contract
   * gives the next token index to any token deposited, even 0 of it by anyone: a batch that named
   * the zero address as its slot's second token, mined after such a deposit, reverts
   * (`WrongTokenPair`) through no fault of its trades. So when the slots the batch would name now
   * are not the ones it was signed with, or the contract named the pair wrong, it is encoded again
   * from the slots as they are and signed again at a new nonce (REPLACED; simulated first, as any
   * batch sent, so a batch that would still revert fails then). Otherwise FAILED with the reason
   * (and split). The reverted transaction leaves the batch's hashes: its nonce is used, and followed
   * it would read as the fate of the new one.
   */
  private async reverted(d: SettlementDeployment, batch: BatchRow, r: ethers.TransactionReceipt, mined: Record<string, unknown>, lease: Fence): Promise<void> {
    const reason = await this.minedRevertReason(d, batch, r);
    // A head checked before this batch failed says nothing of it: a chain rewound to that very head must be checked again.
    this.checkedHeads.delete(d.network.blockchainId);
    // Sent again after a reorg while its trades are with the parts it was split into (or the batch they went back to): FAILED again, nothing to split.
    if ((await this.holdsNoTrades(batch)) || !(await this.slotsMovedUnder(d, batch, reason))) return this.failAndSplit(batch, reason, lease, mined);
    const detail = `transaction ${r.hash} reverted in block ${r.blockNumber} (${reason}): the contract's token slots changed under it; encoded again and signed again`;
    const moved = await this.fenced(lease, (trx) => transition(trx, this.outbox, batch, 'REPLACED', { txHash: null, replacedTxHashes: hashesOf(batch).filter((h) => h !== r.hash) }, detail));
    if (moved) this.logger.warn({ batchId: batch.id, txHash: r.hash, reason }, 'settlement batch reverted on chain: the token slots changed under it; it is sent again');
  }

  /** Whether the contract's token slots are not what the batch's mined transaction named (or the contract said so): its trades are not at fault. */
  private async slotsMovedUnder(d: SettlementDeployment, batch: BatchRow, reason: string): Promise<boolean> {
    if (reason.startsWith('WrongTokenPair(')) return true;
    let onChain: Awaited<ReturnType<SettlementBatcher['onChainBatch']>>;
    try {
      onChain = await this.onChainBatch(batch);
    } catch (e) {
      if (e instanceof UnsettleableBatch) return false;
      throw e;
    }
    const where = await readTokenSlots(d.network.provider, d.address, onChain.deltas.map((x) => x.token));
    if (onChain.deltas.some((x) => !where.indices.has(x.token))) return false;
    return settleCalldata(batch.id, onChain.keys, onChain.deltas, where) !== ethers.Transaction.from(batch.rawTx!).data;
  }

  /**
   * Why a mined transaction reverted: the same call replayed at its block's parent state, and if it
   * passes there (what made it revert came earlier in its block, such as a deposit giving a token
   * the index the batch named as free), at its block's own state.
   */
  private async minedRevertReason(d: SettlementDeployment, batch: BatchRow, r: ethers.TransactionReceipt): Promise<string> {
    const tx = ethers.Transaction.from(batch.rawTx!);
    for (const blockTag of [r.blockNumber - 1, r.blockNumber]) {
      try {
        await d.network.provider.call({ from: batch.fromAddress!, to: tx.to!, data: tx.data, blockTag });
      } catch (e) {
        // A node without that state (or not answering) says nothing of the transaction.
        if (isDefinitiveRefusal(e)) return revertReason(e);
      }
    }
    return 'the transaction reverted on chain';
  }

  /** Whether a batch holds none of the trades it was made with: it failed and was split, and a reorg took back the block its transaction reverted in (checkReorgs). */
  private async holdsNoTrades(batch: BatchRow, db: Knex | Knex.Transaction = this.db): Promise<boolean> {
    return batch.tradeCount > 0 && !(await batchHoldsTrades(db, batch.id));
  }

  /**
   * A batch holding no trades (holdsNoTrades) is settled by its own signed transaction or not at all:
   * sent again at its nonce when that is free (followed: CONFIRMED with its trades, or FAILED again);
   * otherwise that transaction can only be mined once its nonce is, which Keel's next transactions
   * take ahead of it (as for any reorged batch behind a gap), and its trades settle where they are:
   * FAILED again, never signed anew.
   */
  private async resendOrFailWithoutTrades(d: SettlementDeployment, batch: BatchRow, lease: Fence): Promise<void> {
    if (await this.resendAfterReorg(d, batch, lease)) return;
    const sent = batch.txHash ? `its transaction ${batch.txHash} is not sent again (nonce ${batch.nonce} is not the next)` : 'it was never sent';
    const reason = `it holds none of its trades any more (they are in the batch they were split from, or in its parts) and ${sent}${batch.failureReason ? `; it had failed with ${batch.failureReason}` : ''}`;
    await this.failAndSplit(batch, reason, lease);
  }

  /**
   * Batches within the reorg window whose transaction is no longer where it was mined: REORGED, to be
   * sent again (true when one was). Confirmed ones, and failed ones whose transaction reverted on
   * chain (FAILED with a block): the reorg may let the same signed transaction be mined again, and
   * settle this time. A REORGED batch goes out as any reorged batch does (its transaction followed
   * where it was mined again, sent again at its nonce when that is free, or signed again): CONFIRMED
   * or FAILED by what the new chain does. A failed batch that was split holds no trades now (its
   * parts do, sent after it, so taken off by the same reorg): it goes first among them (the same
   * first trade, made earlier), and only its own transaction can settle it; settled, its trades are
   * its again and its parts, which can then only revert, FAILED; reverted again, or its nonce gone
   * to another transaction, it is FAILED again and the parts settle the trades.
   */
  private async checkReorgs(d: SettlementDeployment, lease: Fence): Promise<boolean> {
    // A block hash, not a height: a chain rewound and grown back to the same height has a new head.
    const latest = await d.network.provider.getBlock('latest');
    if (!latest || this.checkedHeads.get(d.network.blockchainId) === latest.hash) return false;
    const head = latest.number;
    const recent: BatchRow[] = await this.db('settlement_batches')
      .where({ blockchainId: d.network.blockchainId })
      .where('blockNumber', '>', head - this.options.reorgWindowBlocks)
      // Batches confirmed (or failed) before the contract was (re)deployed belong to a chain that was reset, not reorganised.
      .where((q) => q.where((c) => c.where('status', 'CONFIRMED').where('confirmedAt', '>=', d.since)).orWhere((f) => f.where('status', 'FAILED').whereNotNull('txHash').where('updatedAt', '>=', d.since)))
      .orderBy([{ column: 'blockNumber', order: 'desc' }, { column: 'createdAt', order: 'desc' }]);
    let reorged = false;
    for (const batch of recent) {
      const where = await whereMined(d.network.port, batch.txHash!, { blockNumber: Number(batch.blockNumber), blockHash: batch.blockHash });
      if (where.kind === 'still' || where.kind === 'behind') continue;
      reorged = true;
      const reverted = batch.status === 'FAILED' ? ` (its transaction had reverted there: ${batch.failureReason})` : '';
      if (where.kind === 'moved') {
        // Re-mined in another block of the new chain: followed there (settled once, or reverted again).
        await this.fenced(lease, (trx) => transition(trx, this.outbox, batch, 'REORGED', {}, `block ${batch.blockNumber} ${batch.blockHash} left the chain${reverted}; the transaction is in block ${where.receipt.blockNumber}`));
        continue;
      }
      await this.fenced(lease, (trx) => transition(trx, this.outbox, batch, 'REORGED', {}, `block ${batch.blockNumber} ${batch.blockHash} left the canonical chain${reverted}`));
      this.logger.warn({ batchId: batch.id, block: batch.blockNumber, status: batch.status }, 'settlement batch reorged: it will be submitted again');
    }
    this.checkedHeads.set(d.network.blockchainId, latest.hash!);
    return reorged;
  }
}
