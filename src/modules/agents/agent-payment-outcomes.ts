import type { Knex } from 'knex';
import type { SendingItem, TransferOutcomeListener } from '../withdrawals/transaction-sender';
import type { AgentPaymentService } from './agent-payment.service';

/**
 * Listens to the transaction sender for the lines of agent payments: signed is SUBMITTED (with the
 * hash), confirmed EXECUTED (with the mined hash), failed FAILED; each in the sender's transaction.
 */
export class AgentPaymentOutcomes implements TransferOutcomeListener {
  constructor(private readonly payments: AgentPaymentService) {}

  async signed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind === 'agent_payment') await this.payments.transferLineMoved(trx, item.id, 'SUBMITTED', { txHash: item.txHash, error: null });
  }

  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind === 'agent_payment') await this.payments.transferLineMoved(trx, item.id, 'EXECUTED', { txHash: item.txHash, error: null });
  }

  async failed(trx: Knex.Transaction, item: SendingItem & { error?: string | null }): Promise<void> {
    if (item.kind === 'agent_payment') await this.payments.transferLineMoved(trx, item.id, 'FAILED', { txHash: item.txHash, error: item.error ?? null });
  }
}
