import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { Hook } from '../../platform/events/hooks';
import { checkSanctions, RecipientScreen } from './transfer-policy';
import { checkFourEyes } from './four-eyes';
import type { TransferQueries } from './transfer-queries';
import { transfersWaitingOn } from './transfer-item-rows';
import type { TransferFunds, TransferKind, TransferDecisionListener, TransferView } from './transfer.domain';

/**
 * An administrator's decision on a transfer held by requireApprovalForTransfers: approved (screened
 * again, then queued) or rejected (its reservations released); listeners are told inside the same
 * transaction. Four eyes: the API key that asked for a transfer may reject it but never approve it
 * (an access token is its issuing key, so no token of it can either).
 */
export class TransferApprovals {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly funds: TransferFunds,
    private readonly sanctions: RecipientScreen,
    private readonly queries: TransferQueries,
  ) {}

  /** Inside the rejecting transaction: a listener's error rolls the rejection back. */
  private readonly rejected = new Hook<Parameters<TransferDecisionListener>>();

  /** Tells `listener` of each rejected transfer's lines, inside the transaction that rejects them (an agent payment fails with them). */
  onRejected(listener: TransferDecisionListener): void {
    this.rejected.add(listener);
  }

  /** Inside the approving transaction: a listener may bring a line up to date before it is queued, or refuse the approval. */
  private readonly approved = new Hook<Parameters<TransferDecisionListener>>();

  /** Tells `listener` of each approved transfer's lines, inside the transaction that queues them (a held swap gets a fresh deadline). */
  onApproved(listener: TransferDecisionListener): void {
    this.approved.add(listener);
  }

  /** The API key `decidedBy` approves or rejects a transfer waiting for approval (requireApprovalForTransfers). */
  async decide(organizationId: string, decidedBy: string, id: string, approve: boolean): Promise<TransferView> {
    id = Ids.uuid('Transfer', id);
    return this.uow.run(approve ? 'transfer.approve' : 'transfer.reject', async (trx) => {
      const row = approve ? await trx('transfers').where({ id, organizationId }).forUpdate().first() : await this.lockForRejection(trx, organizationId, id);
      if (!row) throw KeelError.notFound('Transfer');
      if (row.status !== 'PENDING_APPROVAL') throw new KeelError('CONFLICT', `The transfer is ${row.status}, not waiting for approval`);
      checkFourEyes(row.requestedBy, decidedBy, approve);
      // The lists may have changed since the request: an approval is screened again.
      if (approve) checkSanctions(this.sanctions, await trx('transfer_items').where({ transferId: id }).orderBy('position').select('recipient'));
      if (approve) {
        await trx('transfers').where({ id }).update({ status: 'QUEUED', decidedBy, decidedAt: trx.fn.now(), updatedAt: trx.fn.now() });
        const items = await trx('transfer_items').where({ transferId: id }).update({ status: 'QUEUED', updatedAt: trx.fn.now() }).returning('id');
        await this.approved.run(trx, { transferId: id, kind: row.kind, itemIds: items.map((i: { id: string }) => i.id) });
      } else {
        await this.reject(trx, row, decidedBy);
      }
      return this.queries.get(organizationId, id, trx);
    });
  }

  /**
   * Locks a transfer to reject with the transfers a rejection may reject with it (those its lines
   * wait on, those whose lines wait on its lines), all in one statement in the order of their ids:
   * two rejections in one group (a sweep and its gas top-up) wait for each other, never deadlock.
   * The transfer's row, or undefined when the organisation has none of this id.
   */
  private async lockForRejection(trx: Knex.Transaction, organizationId: string, id: string): Promise<Record<string, any> | undefined> {
    // Each part an indexed lookup (the lines by transfer, the items by id and by after_item_id, migration 059).
    const group = `SELECT CAST(:id AS uuid)
                   UNION SELECT w.transfer_id FROM transfer_items l JOIN transfer_items w ON w.id = l.after_item_id WHERE l.transfer_id = :id
                   UNION SELECT w.transfer_id FROM transfer_items l JOIN transfer_items w ON w.after_item_id = l.id WHERE l.transfer_id = :id`;
    const rows = await trx('transfers').where({ organizationId }).whereRaw(`id IN (${group})`, { id }).orderBy('id').forUpdate();
    return rows.find((r) => r.id === id);
  }

  /**
   * Rejects a transfer held for approval (its row locked by the caller): its lines' reservations
   * are released and the rejection listeners told. A gas top-up held with it that paid only for
   * its lines is rejected too, so no gas money moves for a send that will not happen; and a
   * transfer held whose lines wait on its lines (a sweep on its gas top-up) can never be sent, so
   * it is rejected too, its reservations released.
   */
  private async reject(trx: Knex.Transaction, row: { id: string; organizationId: string; kind: TransferKind; addressId: string | null; masterWalletId: string }, decidedBy: string): Promise<void> {
    await trx('transfers').where({ id: row.id }).update({ status: 'REJECTED', decidedBy, decidedAt: trx.fn.now(), updatedAt: trx.fn.now() });
    const items: { id: string; assetId: string; rawAmount: string; tokenId: string | null }[] = await trx('transfer_items').where({ transferId: row.id }).update({ status: 'REJECTED', updatedAt: trx.fn.now() }).returning(['id', 'assetId', 'rawAmount', 'tokenId']);
    const walletId = row.addressId ?? row.masterWalletId;
    // An NFT line reserved nothing in the ledger (TransferService.insert): nothing to give back.
    await this.funds.release(trx, items.filter((i) => i.tokenId === null).map((i) => ({ organizationId: row.organizationId, walletId, assetId: i.assetId, rawAmount: BigInt(i.rawAmount), itemId: i.id })));
    // Locked before the listeners lock what they record (a settlement rule's execution), as a
    // top-up rejected on its own locks it first: two rejections at once wait, never deadlock.
    const heldTopUps = await trx('transfers as t')
      .where({ 't.organizationId': row.organizationId, 't.kind': 'gas_topup', 't.status': 'PENDING_APPROVAL' })
      .whereExists(trx('transfer_items as g').whereRaw('g.transfer_id = t.id').whereIn('g.id', trx('transfer_items').where({ transferId: row.id }).whereNotNull('afterItemId').select('afterItemId')))
      // Still paying for another send that may go ahead: it stays for the administrator to decide.
      .whereNotExists(trx('transfer_items as g').join('transfer_items as o', 'o.afterItemId', 'g.id').whereRaw('g.transfer_id = t.id').whereNotIn('o.status', ['REJECTED', 'FAILED']))
      .orderBy('t.id')
      .forUpdate()
      .select('t.*');
    const heldWaiting = await trx('transfers')
      .where({ organizationId: row.organizationId, status: 'PENDING_APPROVAL' })
      .whereIn('id', transfersWaitingOn(trx, items.map((i) => i.id)))
      .orderBy('id')
      .forUpdate();
    await this.rejected.run(trx, { transferId: row.id, kind: row.kind, itemIds: items.map((i) => i.id) });
    for (const topUp of heldTopUps) await this.reject(trx, topUp, decidedBy);
    for (const waiting of heldWaiting) await this.reject(trx, waiting, decidedBy);
  }

}
