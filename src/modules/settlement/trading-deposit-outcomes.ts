import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import type { LedgerService } from '../ledger';
import { itemRecords, type SendingItem, type TransferOutcomeListener } from '../withdrawals';
import { TRADING_TRANSFER_EVENT } from './trading.domain';
import { eventData } from './trading.service';

/**
 * A deposit to trading is a transfer line calling the settlement contract from the wallet: once the
 * transaction sender finds it CONFIRMED, its amount is credited to the wallet's trading balance (in
 * the same transaction, after the custody ledger booked its gas); a line the chain refused was
 * refunded to custody by the ledger and the deposit is FAILED. A migration's deposit (see
 * TradingService.migrationDeposit) is not credited to trading, which already counts it.
 */
export class TradingDepositOutcomes implements TransferOutcomeListener {
  constructor(
    private readonly ledger: LedgerService,
    private readonly outbox: Outbox,
  ) {}

  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    const row = await this.pending(trx, item);
    if (!row) return;
    // A migration's deposit brought into the contract what the trading ledger already counted.
    if (!row.migration) await this.ledger.credit(trx, { organizationId: row.organizationId, walletId: row.walletId, assetId: row.assetId, amount: BigInt(row.rawAmount), reference: `trading-deposit:${row.id}`, account: 'trading' });
    await this.finish(trx, row, 'CONFIRMED', { txHash: item.txHash });
  }

  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    const row = await this.pending(trx, item);
    if (!row) return;
    // The custody credit a migration made for it is taken back (the ledger refunded the line to custody just before).
    if (row.migration) await this.ledger.debit(trx, { organizationId: row.organizationId, walletId: row.walletId, assetId: row.assetId, amount: BigInt(row.rawAmount), reference: `trading-migration-refund:${row.id}`, account: 'custody' });
    await this.finish(trx, row, 'FAILED', { txHash: item.txHash, failureReason: (await itemRecords(trx, [item.id])).get(item.id)?.error ?? 'the deposit transaction failed' });
  }

  private async pending(trx: Knex.Transaction, item: SendingItem): Promise<Record<string, any> | undefined> {
    if (item.kind !== 'trading_deposit') return undefined;
    return trx('tradingTransfers').where({ depositItemId: item.id, status: 'PENDING' }).forUpdate().first();
  }

  private async finish(trx: Knex.Transaction, row: Record<string, any>, status: 'CONFIRMED' | 'FAILED', changes: Record<string, unknown>): Promise<void> {
    const item = (await itemRecords(trx, [row.depositItemId])).get(row.depositItemId);
    const [updated] = await trx('tradingTransfers').where({ id: row.id }).update({ ...changes, status, blockNumber: item?.blockNumber ?? null, updatedAt: trx.fn.now() }).returning('*');
    await this.outbox.publish(trx, { organizationId: row.organizationId, type: `${TRADING_TRANSFER_EVENT}.${status.toLowerCase()}`, data: eventData(updated) });
  }
}
