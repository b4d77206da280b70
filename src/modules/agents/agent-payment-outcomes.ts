import type { Knex } from 'knex';
import type { SendingItem, TransferOutcomeListener } from '../withdrawals';
import type { AgentPaymentService } from './agent-payment.service';

/**
 * Listens to the transaction sender for the lines of agent payments: signed is SUBMITTED (with the
 * hash), confirmed EXECUTED (with the mined hash), failed FAILED; each in the sender's transaction.
 * And to transfer rejections (`rejected`, for TransferService.onRejected): FAILED.
 */
export class AgentPaymentOutcomes implements TransferOutcomeListener {
  constructor(private readonly payments: AgentPaymentService) {}

  async signed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind === 'agent_payment') await this.payments.transferLineMoved(trx, item.id, 'SUBMITTED', { txHash: item.txHash, error: null });
  }

  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind === 'agent_payment') await this.payments.transferLineMoved(trx, item.id, 'EXECUTED', { txHash: item.txHash, error: null });
  }

  /** A transfer held by its master wallet's requireApprovalForTransfers and rejected there: the payment fails. */
  readonly rejected = async (trx: Knex.Transaction, transfer: { kind: string; itemIds: string[] }): Promise<void> => {
    if (transfer.kind !== 'agent_payment') return;
    for (const id of transfer.itemIds) await this.payments.transferLineMoved(trx, id, 'FAILED', { txHash: null, error: "the transfer was rejected under the master wallet's requireApprovalForTransfers" });
  };

  async failed(trx: Knex.Transaction, item: SendingItem & { error?: string | null }): Promise<void> {
    if (item.kind === 'agent_payment') await this.payments.transferLineMoved(trx, item.id, 'FAILED', { txHash: item.txHash, error: item.error ?? null });
  }
}
