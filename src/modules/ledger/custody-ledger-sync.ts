import { Knex } from 'knex';
import type { DepositListener } from '../transfers/chain-activity-recorder';
import type { ChainTransferModel } from '../transfers/chain-transfer.model';
import type { TransferFunds, FundsLine } from '../transfers/transfer.service';
import type { SendingItem, TransferOutcomeListener } from '../transfers/transaction-sender';
import type { LedgerService } from './ledger.service';

/** One credit per deposit per block it was mined in: a deposit a reorg re-mined elsewhere counts again. */
const depositReference = (d: ChainTransferModel) => `deposit:${d.blockchainId}:${d.txHash}:${d.logIndex}:${d.blockHash}`;

/**
 * Keeps the trading ledger in step with custody: confirmed deposits are credited and reorged ones
 * taken back; a transfer out is debited when it is requested and refunded if it fails or is rejected.
 */
export class CustodyLedgerSync implements DepositListener, TransferFunds, TransferOutcomeListener {
  constructor(private readonly ledger: LedgerService) {}

  async confirmed(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    for (const d of deposits) {
      await this.ledger.credit(trx, { organizationId: d.organizationId, walletId: d.addressId ?? d.masterWalletId, assetId: d.assetId, amount: BigInt(d.rawValue), reference: depositReference(d) });
    }
  }

  async reverted(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    for (const d of deposits) await this.ledger.reverseCredit(trx, { reference: depositReference(d) });
  }

  async spendable(trx: Knex.Transaction, walletId: string, assetId: string): Promise<bigint> {
    return (await this.ledger.balance(trx, walletId, assetId)).available;
  }

  async reserve(trx: Knex.Transaction, lines: FundsLine[]): Promise<void> {
    for (const l of lines) await this.ledger.debit(trx, { organizationId: l.organizationId, walletId: l.walletId, assetId: l.assetId, amount: l.rawAmount, reference: `transfer:${l.itemId}` });
  }

  async release(trx: Knex.Transaction, lines: FundsLine[]): Promise<void> {
    for (const l of lines) await this.ledger.credit(trx, { organizationId: l.organizationId, walletId: l.walletId, assetId: l.assetId, amount: l.rawAmount, reference: `transfer-refund:${l.itemId}` });
  }

  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    await this.release(trx, [{ organizationId: item.organizationId, walletId: item.addressId ?? item.masterWalletId, assetId: item.assetId, rawAmount: BigInt(item.rawAmount), itemId: item.id }]);
  }
}
