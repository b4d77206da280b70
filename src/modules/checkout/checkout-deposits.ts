import { Knex } from 'knex';
import type { DepositListener } from '../deposits';
import { chainTransferById, type ChainTransferModel } from '../deposits';
import { txHashesSentAs, type AutoSweeper } from '../withdrawals';
import { chainConfirmations, chainFamilies } from '../chains';
import type { CheckoutDesk } from './checkout-desk';
import { CheckoutModel, CheckoutTransferModel } from './checkout.model';
import { classify } from './checkout-status';

/**
 * Matches recorded deposits to checkouts by their address, inside the deposit watcher's
 * transaction: each becomes a checkout transfer of its own asset and chain, classified
 * (checkout-status.ts: only the checkout's asset on its chain, from a sender the AML flagger let
 * through, admitted by the owner, is a PAYMENT), that gathers confirmations; a PAYMENT counts
 * towards the amount once it has them. A confirmed transfer's funds are swept to the settlement
 * wallet, whatever its kind (the sweeper holds an AML-flagged one). A reorg takes a transfer back
 * (REVERTED).
 */
export class CheckoutDeposits implements DepositListener {
  constructor(
    private readonly desk: CheckoutDesk,
    private readonly sweeper: AutoSweeper,
  ) {}

  async confirmed(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    // A gas top-up for the settlement sweep is Keel's own doing, not a payment; a payment from
    // another of the organisation's wallets (category internal) is one like any other.
    const incoming = deposits.filter((d) => d.addressId && d.direction === 'incoming');
    const topUps = await txHashesSentAs(trx, 'gas_topup', incoming.filter((d) => d.category === 'internal').map((d) => d.txHash));
    const candidates = incoming.filter((d) => !topUps.has(d.txHash));
    if (!candidates.length) return;
    const checkouts = await CheckoutModel.query(trx)
      .whereIn('addressId', candidates.map((d) => d.addressId!))
      .orderBy('id')
      .forUpdate();
    if (!checkouts.length) return;
    const byAddress = new Map(checkouts.map((c) => [c.addressId, c]));
    const confirmationsByChain = await chainConfirmations(trx, candidates.map((d) => d.blockchainId));
    const families = await chainFamilies(trx, candidates.map((d) => d.blockchainId));
    for (const deposit of candidates) {
      let checkout = byAddress.get(deposit.addressId!);
      if (!checkout) continue;
      let kind = classify(checkout, { blockchainId: deposit.blockchainId, assetId: deposit.assetId, blockTimestamp: new Date(deposit.blockTimestamp), amlFlagged: !!deposit.amlFlaggedAt });
      if (kind === 'PAYMENT' && !(await this.desk.admits(trx, checkout))) kind = 'OVER_LIMIT';
      const confirmations = confirmationsByChain.get(deposit.blockchainId) ?? 1;
      // The one branch on the chain family here: a Solana deposit is recorded once its slot is
      // finalized, so it is final as recorded (nothing counts its confirmations afterwards).
      const final = families.get(deposit.blockchainId) === 'solana';
      const required = final ? confirmations : Math.max(confirmations, this.desk.paymentConfirmations);
      // Recorded with its confirmations already (always on Solana; on EVM when the chain's count is the one asked for): confirmed at once.
      const confirmed = confirmations >= required;
      const status = confirmed ? 'CONFIRMED' : 'CONFIRMING';
      const counted = Math.min(confirmations, required);
      const now = new Date();
      // A transfer a reorg took back and the new fork included again is recorded again, in its own row: not a new transfer.
      const recordedBefore = !!(await trx('checkout_transfers').where({ chainTransferId: deposit.id }).first('id'));
      const [row] = await trx('checkout_transfers')
        .insert({
          organizationId: deposit.organizationId,
          checkoutId: checkout.id,
          chainTransferId: deposit.id,
          assetId: deposit.assetId,
          blockchainId: deposit.blockchainId,
          kind,
          status,
          txHash: deposit.txHash,
          fromAddress: deposit.fromAddress,
          rawValue: deposit.rawValue,
          blockNumber: deposit.blockNumber,
          confirmations: counted,
          requiredConfirmations: required,
        })
        .onConflict('chain_transfer_id')
        .merge({ kind, status, blockNumber: deposit.blockNumber, confirmations: counted, requiredConfirmations: required, updatedAt: now })
        .returning('*');
      const transfer = CheckoutTransferModel.fromDatabaseJson(row);
      // A payment confirmed as recorded moves its checkout once (straight to PAID, UNDERPAID or OVERPAID: one owner event), never through CONFIRMING.
      if (kind === 'PAYMENT') checkout = await this.desk.update(trx, checkout, confirmed ? received(checkout, transfer) : { confirmingRaw: (BigInt(checkout.confirmingRaw) + BigInt(deposit.rawValue)).toString() });
      // What the head showed at the address was this deposit (a held one of the checkout's asset), not a payment.
      else if (checkout.status === 'DETECTED' && deposit.assetId === checkout.assetId && deposit.blockchainId === checkout.blockchainId) checkout = await this.desk.update(trx, checkout, { seenRaw: '0' });
      byAddress.set(checkout.addressId, checkout);
      await this.desk.transferChanged(trx, checkout, transfer, !recordedBefore);
      if (confirmed) await this.sweep(trx, transfer);
    }
  }

  /**
   * A transfer gained confirmations: recorded, and once it has the required count it is CONFIRMED,
   * counts (a PAYMENT) and is swept to the settlement wallet. The caller holds the checkout's lock.
   */
  async advance(trx: Knex.Transaction, checkout: CheckoutModel, transfer: CheckoutTransferModel, confirmations: number): Promise<CheckoutModel> {
    const confirmed = confirmations >= transfer.requiredConfirmations;
    const updated = await CheckoutTransferModel.query(trx).patchAndFetchById(transfer.id, {
      confirmations: Math.min(confirmations, transfer.requiredConfirmations),
      status: confirmed ? 'CONFIRMED' : 'CONFIRMING',
      updatedAt: new Date(),
    });
    if (confirmed && transfer.kind === 'PAYMENT') {
      checkout = await this.desk.update(trx, checkout, { ...received(checkout, transfer), confirmingRaw: (BigInt(checkout.confirmingRaw) - BigInt(transfer.rawValue)).toString() });
    }
    await this.desk.transferChanged(trx, checkout, updated, false);
    if (confirmed) await this.sweep(trx, transfer);
    return checkout;
  }

  /** A confirmed transfer's funds, whatever its kind, go to the settlement wallet (the sweeper holds an AML-flagged one). */
  private async sweep(trx: Knex.Transaction, transfer: CheckoutTransferModel): Promise<void> {
    const deposit = await chainTransferById(trx, transfer.chainTransferId);
    if (deposit) await this.sweeper.sweepToMaster(trx, deposit);
  }

  async reverted(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    const transfers = await CheckoutTransferModel.query(trx)
      .whereIn('chainTransferId', deposits.map((d) => d.id))
      .whereNot('status', 'REVERTED');
    for (const seen of transfers) {
      let checkout = await this.desk.locked(trx, seen.checkoutId);
      // Read again under the checkout's lock: the checkout watcher may have confirmed it meanwhile.
      const transfer = await CheckoutTransferModel.query(trx).findById(seen.id).forUpdate();
      if (!transfer || transfer.status === 'REVERTED') continue;
      const updated = await CheckoutTransferModel.query(trx).patchAndFetchById(transfer.id, { status: 'REVERTED', updatedAt: new Date() });
      if (transfer.kind === 'PAYMENT') {
        const value = BigInt(transfer.rawValue);
        const column = transfer.status === 'CONFIRMED' ? 'receivedRaw' : 'confirmingRaw';
        // What the head showed is gone with the fork: detection starts again from nothing.
        checkout = await this.desk.update(trx, checkout, { [column]: (BigInt(checkout[column]) - value).toString(), seenRaw: '0' });
      }
      await this.desk.transferChanged(trx, checkout, updated, false);
    }
  }
}

/** A confirmed payment counted: the checkout's received amount with it. */
function received(checkout: CheckoutModel, transfer: CheckoutTransferModel): Partial<CheckoutModel> {
  return { receivedRaw: (BigInt(checkout.receivedRaw) + BigInt(transfer.rawValue)).toString() };
}
