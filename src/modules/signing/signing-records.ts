import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import { toPage, PageResult } from '../../platform/paging';
import { fetchPage } from '../../platform/db/fetch-page';
import type { Outbox } from '../../platform/events/outbox';
import type { SendingWallet } from '../wallets';
import type { SignatureFilter, SignatureView, SigningKind, SigningStatus } from './signing.domain';
import type { RiskFinding, SigningRisk } from './signing.domain';

/** A request as first recorded: who signs, what, and how it stands after the checks. */
export interface NewSigningRecord {
  wallet: SendingWallet;
  kind: SigningKind;
  request: Record<string, unknown>;
  blockchainId: string | null;
  broadcast: boolean;
  risks: RiskFinding[];
  acknowledgedRisk: SigningRisk | null;
  status: SigningStatus;
  signature?: string | null;
  txHash?: string | null;
  transferId?: string | null;
  errorCode?: string | null;
  reason?: string | null;
}

/** A later outcome of a recorded request (approved and signed, sent, rejected, failed). */
export interface SigningOutcome {
  status: SigningStatus;
  signature?: string | null;
  txHash?: string | null;
  errorCode?: string | null;
  reason?: string | null;
  /** False: recorded without an event (a broadcast transaction reverted after its signed_success; its transfer_failed tells it). */
  announce?: boolean;
}

/** Statuses that are an outcome the wallet's owner hears of (`*.signed_success` / `*.signed_failed`). */
const SUCCESS: readonly SigningStatus[] = ['SIGNED'];
const FAILURE: readonly SigningStatus[] = ['REFUSED', 'REJECTED', 'FAILED'];

/**
 * The signing_requests table: each request and its outcome for audit, and the outcome's event
 * written with it in the same transaction (the outbox carries it to webhooks).
 */
export class SigningRecords {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
  ) {}

  async insert(trx: Knex.Transaction, r: NewSigningRecord): Promise<SignatureView> {
    const [row] = await trx('signing_requests')
      .insert({
        organizationId: r.wallet.organizationId,
        masterWalletId: r.wallet.masterWalletId,
        addressId: r.wallet.addressId,
        signer: r.wallet.address,
        kind: r.kind,
        request: JSON.stringify(r.request),
        blockchainId: r.blockchainId,
        broadcast: r.broadcast,
        risks: r.risks,
        acknowledgedRisk: r.acknowledgedRisk,
        status: r.status,
        signature: r.signature ?? null,
        txHash: r.txHash ?? null,
        transferId: r.transferId ?? null,
        errorCode: r.errorCode ?? null,
        reason: r.reason ?? null,
      })
      .returning('*');
    const view = viewOf(row);
    await this.announce(trx, r.wallet.organizationId, view);
    return view;
  }

  /** Moves the request held by (or sent as) a transfer on, under its row lock; undefined when no request is. */
  async settleByTransfer(trx: Knex.Transaction, transferId: string, outcome: (current: SignatureView & { organizationId: string }) => Promise<SigningOutcome | null>): Promise<SignatureView | undefined> {
    const row = await trx('signing_requests').where({ transferId }).forUpdate().first();
    if (!row) return undefined;
    const next = await outcome({ ...viewOf(row), organizationId: row.organizationId });
    if (!next) return viewOf(row);
    const { announce, ...changes } = next;
    const [updated] = await trx('signing_requests')
      .where({ id: row.id })
      .update({ ...changes, updatedAt: trx.fn.now() })
      .returning('*');
    const view = viewOf(updated);
    if (announce !== false) await this.announce(trx, row.organizationId, view);
    return view;
  }

  async list(organizationId: string, wallet: { masterWalletId: string; addressId: string | null }, args: SignatureFilter): Promise<PageResult<SignatureView>> {
    const q = this.db('signing_requests')
      .where({ organizationId, masterWalletId: wallet.masterWalletId })
      .modify((b) => {
        if (wallet.addressId) b.where({ addressId: wallet.addressId });
        else b.whereNull('addressId');
        if (args.status) b.where({ status: args.status });
        if (args.kind) b.where({ kind: args.kind });
      });
    const { rows, total } = await fetchPage<Record<string, any>>(q, args, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return toPage(rows.map(viewOf), total, args);
  }

  async get(organizationId: string, id: string, trx: Knex | Knex.Transaction = this.db): Promise<SignatureView> {
    id = Ids.uuid('Signature', id);
    const row = await trx('signing_requests').where({ id, organizationId }).first();
    if (!row) throw KeelError.notFound('Signature');
    return viewOf(row);
  }

  /** `address.signed_*` for a deposit address, `master.signed_*` for the master wallet's own address; nothing while undecided. */
  private async announce(trx: Knex.Transaction, organizationId: string, v: SignatureView): Promise<void> {
    const outcome = SUCCESS.includes(v.status) ? 'signed_success' : FAILURE.includes(v.status) ? 'signed_failed' : null;
    if (!outcome) return;
    await this.outbox.publish(trx, {
      organizationId,
      type: `${v.addressId ? 'address' : 'master'}.${outcome}`,
      data: {
        signatureId: v.id,
        kind: v.kind,
        status: v.status,
        masterWalletId: v.masterWalletId,
        addressId: v.addressId,
        signer: v.signer,
        blockchainId: v.blockchainId,
        request: v.request,
        risks: v.risks,
        acknowledgedRisk: v.acknowledgedRisk,
        signature: v.signature,
        txHash: v.txHash,
        transferId: v.transferId,
        errorCode: v.errorCode,
        reason: v.reason,
      },
    });
  }
}

function viewOf(r: Record<string, any>): SignatureView {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    masterWalletId: r.masterWalletId,
    addressId: r.addressId,
    signer: r.signer,
    request: r.request,
    blockchainId: r.blockchainId,
    broadcast: r.broadcast,
    risks: r.risks ?? [],
    acknowledgedRisk: r.acknowledgedRisk,
    signature: r.signature,
    txHash: r.txHash,
    transferId: r.transferId,
    errorCode: r.errorCode,
    reason: r.reason,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
