import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { BatchRow } from './batch-transitions';
import { NATIVE_TOKEN, settlementInterface } from './settlement-contract';
import type { SettlementDeployment } from './settlement-deployments';
import { walletAccounts } from './wallet-accounts';

/**
 * Hands proceeds back: after a batch is final (confirmed, or a failed trade alone), the operator
 * releases what each wallet it touched holds in the contract, in each token it touched, to the
 * wallet's own address, where the ordinary transfer endpoints send from.
 */
export class ProceedsRelease {
  constructor(private readonly db: Knex) {}

  /** Final batches whose wallets' contract balances were not handed back yet: released in one operator transaction. */
  async releaseFinished(d: SettlementDeployment): Promise<void> {
    const finished: BatchRow[] = await this.db('settlement_batches as b')
      .where({ 'b.blockchainId': d.network.blockchainId })
      .whereNull('b.releasedAt')
      .where((q) => q.where('b.status', 'CONFIRMED').orWhere((f) => f.where('b.status', 'FAILED').whereNotExists(this.db('settlement_batches as c').whereRaw('c.parent_batch_id = b.id'))))
      .orderBy('b.createdAt')
      .select('b.*')
      .limit(5);
    if (!finished.length) return;
    const pairs = new Map<string, [string, string]>();
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
    const toRelease = [...pairs.values()].filter((_, i) => held[i]);
    if (toRelease.length) {
      const data = settlementInterface().encodeFunctionData('release', [toRelease.map(([a]) => a), toRelease.map(([, t]) => t)]);
      const tx = await d.operator.sendTransaction({ to: d.address, data, nonce: await d.network.provider.getTransactionCount(d.operator.address, 'pending') });
      const receipt = await tx.wait(1, 60_000);
      if (receipt?.status !== 1) throw new Error(`settlement release ${tx.hash} failed`);
    }
    await this.db('settlement_batches').whereIn('id', finished.map((b) => b.id)).update({ releasedAt: this.db.fn.now() });
  }
}
