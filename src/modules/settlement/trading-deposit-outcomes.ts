import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import type { CustodyLedgerSync, LedgerService } from '../ledger';
import { itemRecords, type SendingItem, type TransferOutcomeListener } from '../withdrawals';
import { TRADING_TRANSFER_EVENT } from './trading.domain';
import { eventData } from './trading.service';

/**
 * A deposit to trading is a transfer line calling the settlement contract from the wallet: once the
 * transaction sender finds it CONFIRMED, its amount is credited to the wallet's trading balance (in
 * the same transaction, after the custody ledger booked its gas; repaying first what the trading
 * account owes in the asset, WalletDebts); a line the chain refused was
 * refunded to custody by the ledger and the deposit is FAILED. A migration's deposit (see
 * TradingService.migrationDeposit) is not credited to trading, which already counts it. The chain's
 * coin sent with a token in the same transaction (`coinAmount`) is a trading transfer of its own on
 * the same line: credited to trading with it, or given back to custody (which TradingService took
 * it from) when the line fails.
 */
export class TradingDepositOutcomes implements TransferOutcomeListener {
  constructor(
    private readonly ledger: LedgerService,
    private readonly custody: CustodyLedgerSync,
    private readonly outbox: Outbox,
  ) {}

  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    for (const row of await this.pending(trx, item)) {
      // A migration's deposit brought into the contract what the trading ledger already counted.
      if (!row.migration) await this.custody.creditFromChain(trx, { organizationId: row.organizationId, walletId: row.walletId, assetId: row.assetId, amount: BigInt(row.rawAmount), reference: `trading-deposit:${row.id}`, account: 'trading' });
      await this.finish(trx, row, 'CONFIRMED', { txHash: item.txHash });
    }
  }

  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    for (const row of await this.pending(trx, item)) {
      // The custody credit a migration made for it is taken back (the ledger refunded the line to custody just before).
      if (row.migration) await this.ledger.debit(trx, { organizationId: row.organizationId, walletId: row.walletId, assetId: row.assetId, amount: BigInt(row.rawAmount), reference: `trading-migration-refund:${row.id}`, account: 'custody' });
      // The coin that rode with the token's line: the line's refund is the token's only.
      if (row.assetId !== item.assetId) await this.ledger.credit(trx, { organizationId: row.organizationId, walletId: row.walletId, assetId: row.assetId, amount: BigInt(row.rawAmount), reference: `trading-deposit-coin-refund:${row.id}`, account: 'custody' });
      await this.finish(trx, row, 'FAILED', { txHash: item.txHash, failureReason: (await itemRecords(trx, [item.id])).get(item.id)?.error ?? 'the deposit transaction failed' });
    }
  }

  /** The line's trading transfers still PENDING: the deposit's, and the coin's that rode with it. */
  private async pending(trx: Knex.Transaction, item: SendingItem): Promise<Record<string, any>[]> {
    if (item.kind !== 'trading_deposit') return [];
    return trx('tradingTransfers').where({ depositItemId: item.id, status: 'PENDING' }).orderBy('id').forUpdate();
  }

  private async finish(trx: Knex.Transaction, row: Record<string, any>, status: 'CONFIRMED' | 'FAILED', changes: Record<string, unknown>): Promise<void> {
    const item = (await itemRecords(trx, [row.depositItemId])).get(row.depositItemId);
    const [updated] = await trx('tradingTransfers').where({ id: row.id }).update({ ...changes, status, blockNumber: item?.blockNumber ?? null, updatedAt: trx.fn.now() }).returning('*');
    await this.outbox.publish(trx, { organizationId: row.organizationId, type: `${TRADING_TRANSFER_EVENT}.${status.toLowerCase()}`, data: eventData(updated) });
  }
}
