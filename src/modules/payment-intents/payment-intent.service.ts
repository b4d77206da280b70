import { Knex } from 'knex';
import { isNftStandard } from '../chains';
import { KeelError } from '../../platform/errors';
import type { Outbox } from '../../platform/events/outbox';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { ChainService } from '../chains';
import type { MasterWalletService } from '../wallets';
import type { CheckoutDesk, CheckoutOwner, CheckoutTransferView, CheckoutView } from '../checkout';
import { askedUnits, CheckoutStatus, type CheckoutModel, type CheckoutTransferModel } from '../checkout';
import { PaymentIntentModel } from './payment-intent.model';
import type { PaymentIntentStatus } from './payment-intent.domain';

const INTENT = 'Payment intent';
const MIN_EXPIRY_SECONDS = 5;
const MAX_EXPIRY_SECONDS = 7 * 86_400;
/** A merchant may cancel an intent nobody is paying, or one left underpaid (to refund it by hand). */
const CANCELLABLE: PaymentIntentStatus[] = ['REQUIRES_PAYMENT', 'UNDERPAID'];

export interface CreatePaymentIntent {
  amount: string;
  assetId: string;
  /** Optional: the asset's own chain. */
  blockchainId?: string | null;
  /** The settlement wallet the deposit address is derived under and the funds are swept to. */
  masterWalletId: string;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
  expiresInSeconds?: number | null;
}

export interface PaymentIntentFilter extends PageWindow {
  status?: PaymentIntentStatus | null;
  masterWalletId?: string | null;
}

export interface PaymentIntentView extends Omit<CheckoutView, 'id' | 'status' | 'createdAt' | 'updatedAt'> {
  id: string;
  status: PaymentIntentStatus;
  checkoutStatus: CheckoutStatus;
  masterWalletId: string;
  description: string | null;
  metadata: Record<string, unknown>;
  cancellationReason: string | null;
  transfers: CheckoutTransferView[];
  createdAt: Date;
  updatedAt: Date;
}

/** The intent status a checkout status means. */
export function intentStatusOf(status: CheckoutStatus): PaymentIntentStatus {
  switch (status) {
    case 'AWAITING_PAYMENT':
      return 'REQUIRES_PAYMENT';
    case 'DETECTED':
    case 'CONFIRMING':
      return 'PROCESSING';
    case 'PAID':
      return 'SUCCEEDED';
    default:
      return status;
  }
}

/** Payment intents: one exact payment of one asset, to its own deposit address, before an expiry. */
export class PaymentIntentService implements CheckoutOwner {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly wallets: MasterWalletService,
    private readonly chains: ChainService,
    private readonly desk: CheckoutDesk,
    private readonly uow: UnitOfWork,
    private readonly defaultTtlSeconds: number,
  ) {}

  async create(organizationId: string, input: CreatePaymentIntent): Promise<PaymentIntentView> {
    const asset = Ids.isUuid(input.assetId) ? (await this.chains.assetViews([input.assetId.toLowerCase()])).get(input.assetId.toLowerCase()) : undefined;
    if (!asset || !asset.isActive) throw KeelError.invalidField('assetId', 'unknown or inactive asset');
    if (isNftStandard(asset.standard)) throw KeelError.invalidField('assetId', 'an NFT collection cannot be asked for in a payment');
    // Any chain family (issue 35): on a Solana cluster the checkout is a Solana Pay request (CheckoutDesk).
    if (input.blockchainId && input.blockchainId.toLowerCase() !== asset.blockchainId) throw KeelError.invalidField('blockchainId', "is not the asset's blockchain");
    const wallet = await this.wallets.row(organizationId, input.masterWalletId);
    if (!wallet.isActive) throw KeelError.invalidField('masterWalletId', 'the master wallet is deactivated');
    if (!(await this.wallets.enabledChainIds(wallet.id)).includes(asset.blockchainId)) throw new KeelError('INVALID_NETWORK', `The master wallet is not enabled on ${asset.blockchain.name}`);
    const expectedRaw = askedUnits(input.amount, asset);
    const ttl = input.expiresInSeconds ?? this.defaultTtlSeconds;
    if (ttl < MIN_EXPIRY_SECONDS || ttl > MAX_EXPIRY_SECONDS) throw KeelError.invalidField('expiresInSeconds', `must be between ${MIN_EXPIRY_SECONDS} and ${MAX_EXPIRY_SECONDS}`);

    return this.uow.run('payment-intent.create', async (trx) => {
      // A payment on a chain Keel does not watch the wallet on would never be recorded.
      if (!(await this.wallets.heldWatchedChainIds(trx, wallet.id)).includes(asset.blockchainId)) throw new KeelError('INVALID_NETWORK', `Monitoring of the master wallet is off on ${asset.blockchain.name}: a payment there would not be recorded`);
      const address = await this.desk.newAddress(trx, organizationId, wallet.id, 'Payment intent', { purpose: 'payment_intent' });
      const intent = await PaymentIntentModel.query(trx).insertAndFetch({
        organizationId,
        status: 'REQUIRES_PAYMENT',
        description: input.description ?? null,
        metadata: input.metadata ?? {},
      } as Partial<PaymentIntentModel>);
      await this.desk.insert(trx, { organizationId, masterWalletId: wallet.id, blockchainId: asset.blockchainId, assetId: asset.id, expectedRaw, expiresAt: new Date(Date.now() + ttl * 1000), paymentIntentId: intent.id, label: wallet.name, message: input.description ?? null }, address);
      return this.publish(trx, intent, 'payment_intent.created');
    });
  }

  async list(organizationId: string, filter: PaymentIntentFilter): Promise<PageResult<PaymentIntentView>> {
    const masterWalletId = Ids.filter('masterWalletId', filter.masterWalletId);
    const q = PaymentIntentModel.query(this.db)
      .where({ organizationId })
      .modify((b) => {
        if (filter.status) b.where('status', filter.status);
        if (masterWalletId) b.whereIn('id', this.desk.intentIdsPayingInto(masterWalletId));
      });
    const { rows, total } = await fetchPage<PaymentIntentModel>(q, filter, [{ column: 'createdAt', order: 'desc' }, { column: 'id' }]);
    return toPage(await this.views(rows), total, filter);
  }

  async get(organizationId: string, id: string): Promise<PaymentIntentView> {
    return (await this.views([await this.row(this.db, organizationId, id)]))[0];
  }

  async cancel(organizationId: string, id: string, reason?: string | null): Promise<PaymentIntentView> {
    id = Ids.uuid(INTENT, id);
    return this.uow.run('payment-intent.cancel', async (trx) => {
      const checkout = await this.desk.lockedOfIntent(trx, organizationId, id);
      const intent = await this.row(trx, organizationId, id);
      if (!checkout) throw KeelError.notFound(INTENT);
      if (!CANCELLABLE.includes(intent.status)) throw new KeelError('CONFLICT', `A ${intent.status} payment intent cannot be cancelled (only ${CANCELLABLE.join(' or ')})`);
      await PaymentIntentModel.query(trx).patch({ cancellationReason: reason ?? null }).where({ id });
      await this.desk.cancel(trx, checkout);
      return (await this.views([await this.row(trx, organizationId, id)], trx))[0];
    });
  }

  /** The checkout moved: the intent follows, with one event per intent status change. */
  async statusChanged(trx: Knex.Transaction, checkout: CheckoutModel): Promise<void> {
    const status = intentStatusOf(checkout.status);
    const [row] = await trx('payment_intents').where({ id: checkout.paymentIntentId }).whereNot({ status }).update({ status, updatedAt: trx.fn.now() }).returning('*');
    if (row) await this.publish(trx, PaymentIntentModel.fromDatabaseJson(row), `payment_intent.${status.toLowerCase()}`);
  }

  async admits(): Promise<boolean> {
    return true;
  }

  async transferChanged(): Promise<void> {
    // The intent's transfers are part of its view (and of its next event); no event of their own.
  }

  private async publish(trx: Knex.Transaction, intent: PaymentIntentModel, type: string): Promise<PaymentIntentView> {
    const [view] = await this.views([intent], trx);
    await this.outbox.publish(trx, { organizationId: intent.organizationId, type, data: { paymentIntentId: view.id, ...view } });
    return view;
  }

  private async row(db: Knex | Knex.Transaction, organizationId: string, id: string): Promise<PaymentIntentModel> {
    const row = await PaymentIntentModel.query(db).findOne({ id: Ids.uuid(INTENT, id), organizationId });
    if (!row) throw KeelError.notFound(INTENT);
    return row;
  }

  private async views(rows: PaymentIntentModel[], trx: Knex | Knex.Transaction = this.db): Promise<PaymentIntentView[]> {
    if (!rows.length) return [];
    const checkouts = await this.desk.ofIntents(rows.map((r) => r.id), trx);
    const byIntent = new Map(checkouts.map((c) => [c.paymentIntentId!, c]));
    const checkoutViews = new Map((await this.desk.views(checkouts, trx)).map((v) => [v.id, v]));
    const transfers: CheckoutTransferModel[] = await this.desk.transfersOf(checkouts.map((c) => c.id), trx);
    const transferViews = await this.desk.transferViews(transfers, new Map(checkouts.map((c) => [c.id, c])), trx);
    return rows.map((r) => {
      const checkout = byIntent.get(r.id)!;
      const { id: _id, status: checkoutStatus, createdAt: _c, updatedAt: _u, ...view } = checkoutViews.get(checkout.id)!;
      return {
        ...view,
        id: r.id,
        status: r.status,
        checkoutStatus,
        masterWalletId: checkout.masterWalletId,
        description: r.description,
        metadata: r.metadata,
        cancellationReason: r.cancellationReason,
        transfers: transferViews.filter((t) => t.checkoutId === checkout.id),
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
      };
    });
  }
}
