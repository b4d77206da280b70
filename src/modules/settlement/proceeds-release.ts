import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { BatchRow } from './batch-transitions';
import type { Logger } from '../../platform/logger';
import { isDefinitiveRefusal, NATIVE_TOKEN, settlementInterface } from './settlement-contract';
import type { SettlementDeployment } from './settlement-deployments';
import { walletAccounts } from './wallet-accounts';
import { Fence, fencedTransaction } from './chain-lease';
import { whereMined } from './where-mined';

/**
 * Hands proceeds back: after a batch is final (confirmed, or a failed trade alone), the operator
 * releases what each wallet it touched holds in the contract, in each token it touched, to the
 * wallet's own address, where the ordinary transfer endpoints send from (a balance whose release
 * reverts is skipped, not allowed to hold the others back).
 */
export class ProceedsRelease {
  constructor(
    private readonly db: Knex,
    private readonly logger: Logger,
  ) {}

  /** Final batches whose wallets' contract balances were not handed back yet: released in one operator transaction. */
  async releaseFinished(d: SettlementDeployment, lease: Fence): Promise<void> {
    const finished: BatchRow[] = await this.db('settlement_batches as b')
      .where({ 'b.blockchainId': d.network.blockchainId })
      .whereNull('b.releasedAt')
      .where((q) => q.where('b.status', 'CONFIRMED').orWhere((f) => f.where('b.status', 'FAILED').whereNotExists(this.db('settlement_batches as c').whereRaw('c.parent_batch_id = b.id'))))
      .orderBy('b.createdAt')
      .select('b.*')
      .limit(5);
    if (!finished.length) return;
    const pairs = new Map<string, Pair>();
    for (const batch of finished) {
      const trades = await this.db('trades').whereIn('id', batch.tradeIds).select('id', 'marketId', 'makerWalletId', 'takerWalletId', 'settlementStatus');
      const live = trades.filter((t: { settlementStatus: string }) => t.settlementStatus === batch.status);
      const walletIds = live.flatMap((t: { makerWalletId: string; takerWalletId: string }) => [t.makerWalletId, t.takerWalletId]);
      const accounts = await walletAccounts(this.db, walletIds);
      const markets = await this.db('markets as m').join('assets as b', 'b.id', 'm.baseAssetId').join('assets as q', 'q.id', 'm.quoteAssetId')
        .whereIn('m.id', [...new Set(live.map((t: { marketId: string }) => t.marketId))])
        .select('b.address as base', 'b.isNative as baseNative', 'q.address as quote', 'q.isNative as quoteNative');
      const tokens = markets.flatMap((m: { base: string; baseNative: boolean; quote: string; quoteNative: boolean }) => [m.baseNative ? NATIVE_TOKEN : ethers.getAddress(m.base), m.quoteNative ? NATIVE_TOKEN : ethers.getAddress(m.quote)]);
      for (const a of accounts.values()) for (const t of tokens) pairs.set(`${a.address.toLowerCase()}|${t}`, [ethers.getAddress(a.address), t]);
    }
    const contract = new ethers.Contract(d.address, settlementInterface(), d.network.provider);
    const held = await Promise.all([...pairs.values()].map(async ([a, t]) => ((await contract.balanceOf(t, a)) as bigint) > 0n));
    const toRelease = await this.releasable(d, [...pairs.values()].filter((_, i) => held[i]));
    let release: { releaseTxHash: string; releaseBlockNumber: number; releaseBlockHash: string } | undefined;
    if (toRelease.length) {
      await lease.renew();
      const data = releaseCalldata(toRelease);
      const tx = await d.operator.sendTransaction({ to: d.address, data, nonce: await d.network.provider.getTransactionCount(d.operator.address, 'pending') });
      const receipt = await this.receiptOf(d, tx.hash, lease);
      if (receipt.status !== 1) throw new Error(`settlement release ${tx.hash} failed`);
      release = { releaseTxHash: receipt.hash, releaseBlockNumber: receipt.blockNumber, releaseBlockHash: receipt.blockHash };
    }
    await fencedTransaction(this.db, lease, (trx) => trx('settlement_batches').whereIn('id', finished.map((b) => b.id)).update({ releasedAt: trx.fn.now(), ...release }));
  }

  /**
   * Releases whose block left the chain while their batches' blocks stayed (a reorg of the blocks
   * after a batch): due again, so the next step hands back what the contract still holds. A release
   * mined again in another block of the new chain is followed there. Only blocks within `window`
   * of the head are looked at, as for batches.
   */
  async checkReorged(d: SettlementDeployment, head: number, window: number, lease: Fence): Promise<void> {
    const released: { releaseTxHash: string; releaseBlockHash: string }[] = await this.db('settlement_batches')
      .where({ blockchainId: d.network.blockchainId })
      .whereNotNull('releaseTxHash')
      .where('releaseBlockNumber', '>', head - window)
      .where('confirmedAt', '>=', d.since)
      .distinct('releaseTxHash', 'releaseBlockHash');
    for (const { releaseTxHash, releaseBlockHash } of released) {
      const where = await whereMined(d.network.provider, releaseTxHash, releaseBlockHash);
      // Unsettled: looked at again when the head moves on.
      if (where.kind === 'still' || where.kind === 'unsettled') continue;
      const moved = where.kind === 'moved' && where.receipt.status === 1 ? { releaseBlockNumber: where.receipt.blockNumber, releaseBlockHash: where.receipt.blockHash } : { releasedAt: null, releaseTxHash: null, releaseBlockNumber: null, releaseBlockHash: null };
      await fencedTransaction(this.db, lease, (trx) => trx('settlement_batches').where({ releaseTxHash, releaseBlockHash }).update(moved));
      if ('releasedAt' in moved) this.logger.warn({ releaseTxHash, block: releaseBlockHash }, 'settlement release reorged: the proceeds will be released again');
    }
  }

  /** Polled for, renewing the lease meanwhile (it is shorter than the wait); past the wait the step ends and the next one releases again. */
  private async receiptOf(d: SettlementDeployment, hash: string, lease: Fence): Promise<ethers.TransactionReceipt> {
    const deadline = Date.now() + RECEIPT_WAIT_MS;
    for (;;) {
      const receipt = await d.network.provider.getTransactionReceipt(hash);
      if (receipt) return receipt;
      if (Date.now() > deadline) throw new Error(`settlement release ${hash} not mined within ${RECEIPT_WAIT_MS} ms`);
      await new Promise((r) => setTimeout(r, RECEIPT_POLL_MS));
      await lease.renew();
    }
  }

  /**
   * The pairs whose release the chain accepts: all of them when the whole release simulates, else
   * each pair simulated alone, and one that reverts (a token that refuses the wallet, an address
   * that refuses the coin) left in the contract, logged, for the account's own exit or a later
   * batch's release, instead of holding back everyone else's proceeds.
   */
  private async releasable(d: SettlementDeployment, pairs: Pair[]): Promise<Pair[]> {
    const accepts = (some: Pair[]) =>
      d.network.provider.estimateGas({ from: d.operator.address, to: d.address, data: releaseCalldata(some) }).then(
        () => true,
        (e: unknown) => {
          if (!isDefinitiveRefusal(e)) throw e;
          return false;
        },
      );
    if (!pairs.length || (await accepts(pairs))) return pairs;
    const kept: Pair[] = [];
    for (const pair of pairs) {
      if (await accepts([pair])) kept.push(pair);
      else this.logger.warn({ account: pair[0], token: pair[1] }, 'settlement: releasing this balance reverts; it stays in the contract');
    }
    return kept;
  }
}

const RECEIPT_WAIT_MS = 60_000;
const RECEIPT_POLL_MS = 100;

/** An account and a token of its balance in the contract. */
type Pair = [string, string];

const releaseCalldata = (pairs: Pair[]) => settlementInterface().encodeFunctionData('release', [pairs.map(([a]) => a), pairs.map(([, t]) => t)]);
