import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { DepositListener } from '../deposits/chain-activity-recorder';
import type { ChainTransferModel } from '../deposits/chain-transfer.model';
import type { TransferFunds, FundsLine } from '../withdrawals/transfer.service';
import type { SendingItem, TransferOutcomeListener } from '../withdrawals/transaction-sender';
import type { ChainService } from '../chains/chain.service';
import type { Logger } from '../../platform/logger';
import type { LedgerService } from './ledger.service';
import type { WalletDebts } from './wallet-debts';

/** One credit per deposit per block it was mined in: a deposit a reorg re-mined elsewhere counts again. */
const depositReference = (d: ChainTransferModel) => `deposit:${d.blockchainId}:${d.txHash}:${d.logIndex}:${d.blockHash}`;

/**
 * Keeps the trading ledger in step with custody: confirmed deposits are credited (repaying any debt
 * of the wallet in the asset first) and reorged ones taken back, what was already spent or locked
 * becoming a debt; a transfer out is debited when it is requested and refunded if it fails or is rejected;
 * the gas a mined transaction paid is debited from the sender's native balance.
 */
export class CustodyLedgerSync implements DepositListener, TransferFunds, TransferOutcomeListener {
  constructor(
    private readonly ledger: LedgerService,
    private readonly chains: ChainService,
    private readonly debts: WalletDebts,
    private readonly logger: Logger,
  ) {}

  /**
   * A deposit a reorg re-mined in another block is credited again (its reference names the block),
   * and first repays the debt its reversal left: in all it counts once.
   */
  async confirmed(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    for (const d of deposits) {
      const credit = { organizationId: d.organizationId, walletId: d.addressId ?? d.masterWalletId, assetId: d.assetId, amount: BigInt(d.rawValue), reference: depositReference(d) };
      if ((await this.ledger.credit(trx, credit)).applied) await this.debts.repayFrom(trx, credit);
    }
  }

  async reverted(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    for (const d of deposits) {
      const reference = depositReference(d);
      const { shortfall } = await this.ledger.reverseCredit(trx, { reference });
      if (shortfall > 0n) {
        await this.debts.record(trx, { organizationId: d.organizationId, walletId: d.addressId ?? d.masterWalletId, assetId: d.assetId, amount: shortfall, reference });
        this.logger.warn({ walletId: d.addressId ?? d.masterWalletId, assetId: d.assetId, shortfall: shortfall.toString() }, 'reorged deposit was already spent or locked: debt recorded');
      }
    }
  }

  async spendable(trx: Knex.Transaction, walletId: string, assetId: string): Promise<bigint> {
    return this.ledger.spendable(trx, walletId, assetId);
  }

  /** Takes each line's amount from what the wallet may spend: nothing while it owes a debt in the asset. */
  async reserve(trx: Knex.Transaction, lines: FundsLine[]): Promise<void> {
    for (const l of lines) {
      const spendable = await this.ledger.spendable(trx, l.walletId, l.assetId);
      if (spendable < l.rawAmount) throw new KeelError('INSUFFICIENT_FUNDS', 'Insufficient balance: the ledger holds less than this line that the wallet may spend (nothing while it owes a debt in the asset)', { walletId: l.walletId, assetId: l.assetId });
      await this.ledger.debit(trx, { organizationId: l.organizationId, walletId: l.walletId, assetId: l.assetId, amount: l.rawAmount, reference: `transfer:${l.itemId}` });
    }
  }

  async release(trx: Knex.Transaction, lines: FundsLine[]): Promise<void> {
    for (const l of lines.filter((x) => x.rawAmount > 0n)) await this.ledger.credit(trx, { organizationId: l.organizationId, walletId: l.walletId, assetId: l.assetId, amount: l.rawAmount, reference: `transfer-refund:${l.itemId}` });
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
