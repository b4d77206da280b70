import { Knex } from 'knex';
import type { DepositListener } from '../transfers/chain-activity-recorder';
import type { ChainTransferModel } from '../transfers/chain-transfer.model';
import type { TransferFunds, FundsLine } from '../transfers/transfer.service';
import type { SendingItem, TransferOutcomeListener } from '../transfers/transaction-sender';
import type { ChainService } from '../chains/chain.service';
import type { Logger } from '../../platform/logger';
import type { LedgerService } from './ledger.service';

/** One credit per deposit per block it was mined in: a deposit a reorg re-mined elsewhere counts again. */
const depositReference = (d: ChainTransferModel) => `deposit:${d.blockchainId}:${d.txHash}:${d.logIndex}:${d.blockHash}`;

/**
 * Keeps the trading ledger in step with custody: confirmed deposits are credited and reorged ones
 * taken back; a transfer out is debited when it is requested and refunded if it fails or is rejected;
 * the gas a mined transaction paid is debited from the sender's native balance.
 */
export class CustodyLedgerSync implements DepositListener, TransferFunds, TransferOutcomeListener {
  constructor(
    private readonly ledger: LedgerService,
    private readonly chains: ChainService,
    private readonly logger: Logger,
  ) {}

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

  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    await this.chargeGas(trx, item);
  }

  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    await this.release(trx, [{ organizationId: item.organizationId, walletId: item.addressId ?? item.masterWalletId, assetId: item.assetId, rawAmount: BigInt(item.rawAmount), itemId: item.id }]);
    await this.chargeGas(trx, item); // a transaction reverted on chain still paid for its gas
  }

  /**
   * Gas is not known until the transaction is mined, so it cannot be reserved up front: it is taken
   * from what is available, and what open orders hold is left alone (the shortfall is logged).
   */
  private async chargeGas(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    const fee = item.feePaid ? BigInt(item.feePaid) : 0n;
    if (fee <= 0n) return;
    const native = (await this.chains.assetsOf(item.blockchainId)).find((a) => a.isNative);
    if (!native) return;
    const walletId = item.addressId ?? item.masterWalletId;
    const { available } = await this.ledger.balance(trx, walletId, native.id);
    const take = available < fee ? available : fee;
    if (take > 0n) await this.ledger.debit(trx, { organizationId: item.organizationId, walletId, assetId: native.id, amount: take, reference: `gas:${item.id}` });
    if (take < fee) this.logger.warn({ itemId: item.id, walletId, shortfall: (fee - take).toString() }, 'gas could not be fully charged to the trading ledger');
  }
}
