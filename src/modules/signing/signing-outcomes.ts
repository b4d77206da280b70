import type { Knex } from 'knex';
import { ethers } from 'ethers';
import type { ChainNetworks } from '../chains';
import type { SendingWallets } from '../wallets';
import type { SendingItem, TransferOutcomeListener, TransferDecisionListener } from '../withdrawals';
import { planMessage, planTransaction, planTypedData, PlanDeps, SigningPlan } from './signing-plans';
import type { SigningRecords } from './signing-records';
import type { SignatureView, SignMessage, SignTransaction, SignTypedData } from './signing.domain';

/**
 * What happens to a signing request after it was recorded: an administrator's decision on the
 * transfer that holds it (TransferService.onApproved / onRejected, in the deciding transaction),
 * and the transaction sender's outcomes of a broadcast one (onOutcome, in the sender's step).
 */
export class SigningOutcomes implements TransferOutcomeListener {
  constructor(
    private readonly wallets: SendingWallets,
    private readonly networks: ChainNetworks,
    private readonly records: SigningRecords,
    private readonly deps: PlanDeps,
  ) {}

  /**
   * Approved: checked again against the lists and the wallet's policy of now (a refusal throws and
   * the approval rolls back); a broadcast transaction is then the sender's (its line is queued by
   * the approval), anything else is signed in the approving transaction and its transfer done.
   */
  readonly approved: TransferDecisionListener = async (trx, decided) => {
    if (decided.kind !== 'signing') return;
    await this.records.settleByTransfer(trx, decided.transferId, async (request) => {
      const source = request.addressId ? { addressId: request.addressId } : { masterWalletId: request.masterWalletId };
      const wallet = await this.wallets.resolve(request.organizationId, source, trx);
      const plan = await this.replan(request, wallet);
      if (plan.refusal) throw plan.refusal;
      if (plan.broadcast) return { status: 'QUEUED' };
      const signed = await plan.sign(await this.wallets.signer(wallet.organizationId, wallet.masterWalletId, wallet.addressId, this.networks.get(plan.blockchainId ?? '')?.provider));
      await trx('transfers').where({ id: decided.transferId }).update({ status: 'CONFIRMED', updatedAt: trx.fn.now() });
      return { status: 'SIGNED', signature: signed.signature, txHash: signed.txHash };
    });
  };

  readonly rejected: TransferDecisionListener = async (trx, decided) => {
    if (decided.kind !== 'signing') return;
    await this.records.settleByTransfer(trx, decided.transferId, async () => ({ status: 'REJECTED', errorCode: 'REJECTED', reason: 'an administrator rejected the request' }));
  };

  /** The sender signed the broadcast transaction: its raw bytes and hash are the signature (signed_success). */
  async signed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind !== 'signing') return;
    await this.records.settleByTransfer(trx, item.transferId, async () => ({ status: 'SIGNED', signature: item.rawTx, txHash: item.txHash }));
  }

  /** Mined: the hash of the transaction that was (after a fee bump, maybe a later signature of the same nonce, whose bytes then become the signature). */
  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind !== 'signing') return;
    const minedBytes = item.rawTx && ethers.keccak256(item.rawTx) === item.txHash ? { signature: item.rawTx } : {};
    await this.records.settleByTransfer(trx, item.transferId, async () => ({ status: 'CONFIRMED', txHash: item.txHash, ...minedBytes, announce: false }));
  }

  /** Failed before it was ever signed (the chain refused it): signed_failed. Reverted after signing: recorded, told by transfer_failed. */
  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind !== 'signing') return;
    await this.records.settleByTransfer(trx, item.transferId, async (request) => ({
      status: 'FAILED',
      errorCode: 'SEND_FAILED',
      reason: item.error ?? 'the transaction failed',
      txHash: item.txHash ?? request.txHash,
      announce: request.status !== 'SIGNED',
    }));
  }

  private replan(request: SignatureView, wallet: Awaited<ReturnType<SendingWallets['resolve']>>): Promise<SigningPlan> {
    if (request.kind === 'MESSAGE') return planMessage(wallet, request.request as unknown as SignMessage);
    if (request.kind === 'TYPED_DATA') return planTypedData(this.deps, wallet, request.request as unknown as SignTypedData);
    return planTransaction(this.deps, wallet, request.request as unknown as SignTransaction, { forApproval: true });
  }
}
