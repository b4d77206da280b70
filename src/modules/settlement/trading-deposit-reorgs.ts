import { Knex } from 'knex';
import { ethers } from 'ethers';
import { recordedBlock, type BlockAt } from '../../platform/chain-port/chain-port';
import type { Logger } from '../../platform/logger';
import type { Metrics } from '../../platform/metrics';
import type { Outbox } from '../../platform/events/outbox';
import type { ChainNetwork } from '../chains';
import { itemRecords } from '../withdrawals';
import { TRADING_TRANSFER_EVENT } from './trading.domain';
import { eventData } from './trading.service';
import { whereAnyMined } from './where-mined';

/**
 * Watches a chain's CONFIRMED deposits to trading within the reorg window for a reorg deeper than
 * the confirmation count: such a deposit was credited to trading, but its transaction is no longer
 * on the chain (or was mined again and reverted), so the contract holds less than the ledger says.
 * Found once: `reorged_at` set, `keel_trading_deposit_reorgs_total{chain}` counted, the outbox event
 * `trading_transfer.reorged` told to the wallet's organisation and an error logged, all in one
 * transaction with the mark (a crash repeats nothing). While it is gone its line's newest signed
 * transaction is sent again at every check (the wallet's nonce is usually free again after a
 * reorg; after a fee bump the one mined may have been an earlier signing, whose bytes are not
 * kept): once any of the line's signings is mined again, the mark is cleared, tx_hash follows it,
 * and the ledger equals the contract again. If it cannot be
 * (the nonce was taken), reconciliation keeps reporting the wallet until an operator settles it.
 */
export class TradingDepositReorgs {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly options: { reorgWindowBlocks: number },
  ) {}

  /** One look at the chain's recent confirmed deposits to trading; how many were newly found taken back. */
  async check(network: ChainNetwork): Promise<number> {
    const provider = network.provider;
    const head = await provider.getBlockNumber();
    const confirmed: Record<string, any>[] = await this.db('tradingTransfers')
      .where({ blockchainId: network.blockchainId, direction: 'DEPOSIT', status: 'CONFIRMED' })
      .where('blockNumber', '>=', head - this.options.reorgWindowBlocks)
      .whereNotNull('txHash');
    // Each with the newest transaction its deposit line signed, and the line's other deposit signings: after a fee bump the one
    // mined (its tx_hash) may be an earlier one, whose bytes are not kept; the newest is what is sent again, so looked for too.
    const items = await itemRecords(this.db, confirmed.map((t) => t.depositItemId));
    const rows: Record<string, any>[] = confirmed.filter((t) => items.has(t.depositItemId)).map((t) => {
      const item = items.get(t.depositItemId)!;
      const signings = [t.txHash, item.rawTx ? ethers.keccak256(item.rawTx) : null, ...(item.replacedTxHashes ?? [])].filter((h): h is string => !!h && !(item.cancelTxHashes ?? []).includes(h));
      return { ...t, signedTx: item.rawTx, signings: [...new Set(signings)] };
    });
    // One block read per height: a deposit whose recorded block is still the chain's needs no receipt.
    const blocks = new Map<number, Promise<BlockAt>>();
    const blockAt = (height: number) => {
      if (!blocks.has(height)) blocks.set(height, network.port.blockAt(height, 'seen'));
      return blocks.get(height)!;
    };
    let found = 0;
    for (const row of rows) {
      if (row.blockHash && !row.reorgedAt && recordedBlock(await blockAt(Number(row.blockNumber)), row.blockHash) === 'canonical') continue;
      const where = await whereAnyMined(network.port, row.signings, { blockNumber: Number(row.blockNumber), blockHash: row.blockHash });
      // Between two chains, or on a node that has not reached its block: looked at again next time.
      if (where.kind === 'unsettled' || where.kind === 'behind') continue;
      const onChain = where.kind !== 'gone' && where.receipt.status === 1;
      if (!onChain && !row.reorgedAt && (await this.mark(row))) {
        found += 1;
        this.metrics.tradingDepositReorgs.inc({ chain: network.spec.slug });
        this.logger.error({ chain: network.spec.slug, tradingTransferId: row.id, walletId: row.walletId, txHash: row.txHash, blockNumber: row.blockNumber }, 'a confirmed deposit to trading was taken off the chain by a reorg deeper than the confirmation count; its transaction is sent again');
      }
      if (onChain) {
        // Where it is now, and by which signing (remembered, so the next look needs only the block); a mark cleared once it is mined again.
        // Only over the row as read: another node may have marked it since (a second reorg), and its mark stands; looked at again next time.
        const [moved] = await this.db('tradingTransfers')
          .where({ id: row.id, txHash: row.txHash, blockHash: row.blockHash })
          .whereRaw("date_trunc('milliseconds', reorged_at) IS NOT DISTINCT FROM ?::timestamptz", [row.reorgedAt])
          .update({ reorgedAt: null, txHash: where.receipt.hash, blockNumber: where.receipt.blockNumber, blockHash: where.receipt.blockHash, updatedAt: this.db.fn.now() })
          .returning('id');
        if (moved && row.reorgedAt) this.logger.warn({ chain: network.spec.slug, tradingTransferId: row.id, txHash: where.receipt.hash, blockNumber: where.receipt.blockNumber }, 'a deposit to trading a deep reorg took off the chain is mined again');
      }
      if (where.kind === 'gone' && row.signedTx) await provider.broadcastTransaction(row.signedTx).catch(() => undefined);
    }
    return found;
  }

  /**
   * Marks the deposit taken back and tells its organisation, once: only over the row as read (false
   * when another check marked it first, or found it mined elsewhere since: looked at again next time).
   */
  private mark(row: Record<string, any>): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const [marked] = await trx('tradingTransfers').where({ id: row.id, txHash: row.txHash, blockHash: row.blockHash }).whereNull('reorgedAt').update({ reorgedAt: trx.fn.now(), updatedAt: trx.fn.now() }).returning('*');
      if (!marked) return false;
      await this.outbox.publish(trx, { organizationId: marked.organizationId, type: `${TRADING_TRANSFER_EVENT}.reorged`, data: { ...eventData(marked), blockNumber: String(marked.blockNumber) } });
      return true;
    });
  }
}
