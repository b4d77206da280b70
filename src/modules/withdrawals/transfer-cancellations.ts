import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { refuseUnlessEvm, type ChainService } from '../chains';
import type { TransferQueries } from './transfer-queries';
import type { TransferView } from './transfer.domain';

/**
 * An administrator's request to cancel a transfer still being sent (a payout sent by mistake, a
 * line stuck behind a nonce the node refused). Only the request is recorded here; the transaction
 * sender acts on it at its next step (TransactionSender): a line not yet signed fails at once, a
 * signed one gets a zero-value transaction to itself at its nonce. A line whose own transaction is
 * mined first stands: a cancellation is a race the chain decides, which the transfer's lines report.
 */
export class TransferCancellations {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly chains: ChainService,
    private readonly queries: TransferQueries,
  ) {}

  async request(organizationId: string, id: string): Promise<TransferView> {
    id = Ids.uuid('Transfer', id);
    return this.uow.run('transfer.cancel', async (trx) => {
      const row = await trx('transfers').where({ id, organizationId }).forUpdate().first();
      if (!row) throw KeelError.notFound('Transfer');
      refuseUnlessEvm(await this.chains.blockchainRow(row.blockchainId), 'transferCancellation');
      if (row.status === 'PENDING_APPROVAL') throw new KeelError('CONFLICT', 'The transfer is waiting for approval: reject it instead');
      if (row.status !== 'QUEUED' && row.status !== 'SUBMITTED') throw new KeelError('CONFLICT', `The transfer is ${row.status}: only a transfer still being sent can be cancelled`);
      // Asked again: the first request stands (and its time).
      if (!row.cancelRequestedAt) await trx('transfers').where({ id }).update({ cancelRequestedAt: trx.fn.now(), updatedAt: trx.fn.now() });
      return this.queries.get(organizationId, id, trx);
    });
  }
}
