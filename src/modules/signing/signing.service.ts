import type { Knex } from 'knex';
import { KeelError, ErrorCode } from '../../platform/errors';
import type { PageResult } from '../../platform/paging';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { SendingWallet, SendingWallets, WalletSource } from '../wallets';
import type { TransferService } from '../withdrawals';
import type { ChainNetworks } from '../chains';
import { planMessage, planTransaction, planTypedData, PlanDeps, SigningPlan } from './signing-plans';
import type { SigningRecords } from './signing-records';
import type { SignatureFilter, SignatureView, SignMessage, SignTransaction, SignTypedData } from './signing.domain';

/** A refusal as recorded with the request's outcome: the same answer on a retry with the Idempotency-Key. */
interface Recorded {
  view: SignatureView;
  refusal: { code: ErrorCode; message: string; details?: Record<string, unknown> } | null;
}

/**
 * Signing with a master wallet's or a deposit address's key: a message (EIP-191), typed data
 * (EIP-712) or a transaction, signed now, sent by the transaction sender (broadcast) or held for
 * approval under security.requireApprovalForTransfers (a transfer of kind `signing`, decided like
 * any transfer). Every request is recorded with its outcome and announced.
 */
export class SigningService {
  constructor(
    private readonly wallets: SendingWallets,
    private readonly networks: ChainNetworks,
    private readonly transfers: TransferService,
    private readonly records: SigningRecords,
    private readonly deps: PlanDeps,
    private readonly uow: UnitOfWork,
  ) {}

  signMessage(organizationId: string, requestedBy: string, source: WalletSource, input: SignMessage): Promise<SignatureView> {
    return this.sign(organizationId, requestedBy, source, (wallet) => planMessage(wallet, input));
  }

  signTypedData(organizationId: string, requestedBy: string, source: WalletSource, input: SignTypedData): Promise<SignatureView> {
    return this.sign(organizationId, requestedBy, source, (wallet) => planTypedData(this.deps, wallet, input));
  }

  signTransaction(organizationId: string, requestedBy: string, source: WalletSource, input: SignTransaction): Promise<SignatureView> {
    return this.sign(organizationId, requestedBy, source, (wallet) => planTransaction(this.deps, wallet, input, { forApproval: false }));
  }

  async list(organizationId: string, source: WalletSource, args: SignatureFilter): Promise<PageResult<SignatureView>> {
    // A deactivated address or inactive wallet signs nothing more, but what it signed stays listed.
    return this.records.list(organizationId, await this.wallets.locate(organizationId, source), args);
  }

  get(organizationId: string, id: string): Promise<SignatureView> {
    return this.records.get(organizationId, id);
  }

  /**
   * The plan is made before the transaction (it reads the chain); the request, its outcome and its
   * event commit together, as one step of the Idempotency-Key's claim. A refusal is recorded and
   * announced (signed_failed), then answered as the error. `requestedBy`: the API key asking, which
   * may not approve the request if it is held.
   */
  private async sign(organizationId: string, requestedBy: string, source: WalletSource, plan: (wallet: SendingWallet) => Promise<SigningPlan>): Promise<SignatureView> {
    const { view, refusal } = await this.uow.runChecked<{ wallet: SendingWallet; plan: SigningPlan }, Recorded>(
      'signing.sign',
      async () => {
        const wallet = await this.wallets.resolve(organizationId, source);
        // The one branch on the family here: signing EVM transactions and typed data has no Solana counterpart (EVM-only, issue 35).
        for (const blockchainId of wallet.blockchainIds) this.networks.refuseOnSolana(blockchainId, 'signing');
        return { wallet, plan: await plan(wallet) };
      },
      (trx, checked) => this.record(trx, checked.wallet, checked.plan, requestedBy),
    );
    if (refusal) throw new KeelError(refusal.code, refusal.message, refusal.details);
    return view;
  }

  private async record(trx: Knex.Transaction, wallet: SendingWallet, plan: SigningPlan, requestedBy: string): Promise<Recorded> {
    const base = { wallet, kind: plan.kind, request: plan.request, blockchainId: plan.blockchainId, broadcast: plan.broadcast, risks: plan.risks, acknowledgedRisk: plan.acknowledgedRisk };
    if (plan.refusal) {
      const { code, message, details } = plan.refusal;
      const view = await this.records.insert(trx, { ...base, status: 'REFUSED', errorCode: code, reason: message });
      return { view, refusal: { code, message, details } };
    }
    const held = wallet.configurations.security.requireApprovalForTransfers;
    if (held || plan.broadcast) {
      const blockchainId = plan.blockchainId ?? wallet.blockchainIds[0];
      const { transferId } = await this.transfers.enqueue(trx, wallet, blockchainId, 'signing', plan.line ? [plan.line] : [], held ? 'PENDING_APPROVAL' : 'QUEUED', requestedBy);
      return { view: await this.records.insert(trx, { ...base, status: held ? 'PENDING_APPROVAL' : 'QUEUED', transferId }), refusal: null };
    }
    const signed = await plan.sign(await this.wallets.signer(wallet.organizationId, wallet.masterWalletId, wallet.addressId, this.networks.get(plan.blockchainId ?? '')?.provider));
    return { view: await this.records.insert(trx, { ...base, status: 'SIGNED', signature: signed.signature, txHash: signed.txHash }), refusal: null };
  }
}
