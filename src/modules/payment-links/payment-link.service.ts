import { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { KeelError } from '../../platform/errors';
import type { Outbox } from '../../platform/events/outbox';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { normalizeDecimal } from '../../platform/decimal';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { ChainService, AssetView, BlockchainView } from '../chains';
import { masterWalletLabel, type MasterWalletService, type MasterWalletModel } from '../wallets';
import type { CheckoutDesk, CheckoutTransferView, CheckoutView } from '../checkout';
import { CheckoutStatus, CheckoutTransferKind, CheckoutTransferStatus, paymentsHeld, type CheckoutTransferModel } from '../checkout';
import { PaymentLinkModel } from './payment-link.model';
import { resolveLinkTerms } from './payment-link-terms';
import { claimSlug, slugTaken } from './slug-ownership';

const LINK = 'Payment link';
const SLUG = /^[a-z0-9](?:[a-z0-9-]{1,62}[a-z0-9])$/;

export interface CreatePaymentLink {
  name: string;
  description?: string | null;
  slug?: string | null;
  channel?: string | null;
  currency: string;
  amount?: string | null;
  paymentLimit?: number | null;
  expiresAt?: Date | null;
  evmSettlementWalletId: string;
  solanaSettlementWalletId?: string | null;
  allowedBlockchainIds?: string[] | null;
  allowedAssetIds?: string[] | null;
  redirectUrl?: string | null;
  successMessage?: string | null;
  failureMessage?: string | null;
  metadata?: Record<string, unknown> | null;
  imgUrl?: string | null;
}

export type UpdatePaymentLink = Partial<Omit<CreatePaymentLink, 'amount'>> & { amount?: string | null; isActive?: boolean | null };

export interface PaymentLinkFilter extends PageWindow {
  isActive?: boolean | null;
  masterWalletId?: string | null;
  currency?: string | null;
  search?: string | null;
}

export interface PaymentLinkView {
  id: string;
  refId: string;
  name: string;
  description: string | null;
  slug: string;
  channel: string;
  currency: string;
  amount: string | null;
  paymentLimit: number | null;
  paymentsConsumed: number;
  expiresAt: Date | null;
  evmSettlementWalletId: string;
  solanaSettlementWalletId: string | null;
  allowedBlockchains: BlockchainView[];
  allowedAssets: AssetView[];
  redirectUrl: string | null;
  successMessage: string | null;
  failureMessage: string | null;
  metadata: Record<string, unknown>;
  imgUrl: string | null;
  isActive: boolean;
  checkoutUrl: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface PaymentLinkTransferView extends CheckoutTransferView {
  paymentLinkId: string;
  checkoutStatus: CheckoutStatus;
}

export interface PaymentLinkCheckoutView extends CheckoutView {
  paymentLinkId: string;
}

export interface LinkTransferFilter extends PageWindow {
  kind?: CheckoutTransferKind | null;
  status?: CheckoutTransferStatus | null;
}

export interface LinkCheckoutFilter extends PageWindow {
  status?: CheckoutStatus | null;
}

/** The spec's payment_link.* data. */
export function linkEventData(link: PaymentLinkModel, wallet: Pick<MasterWalletModel, 'id' | 'name' | 'walletAddress'>): Record<string, unknown> {
  return {
    paymentLinkId: link.id,
    name: link.name,
    slug: link.slug,
    amount: link.amount === null ? null : normalizeDecimal(link.amount),
    currency: link.currency,
    redirectUrl: link.redirectUrl,
    isActive: link.isActive,
    expiresAt: link.expiresAt ? new Date(link.expiresAt).toISOString() : null,
    paymentLimit: link.paymentLimit,
    paymentsConsumed: link.paymentsConsumed,
    masterWallet: { id: wallet.id, name: wallet.name, walletAddress: wallet.walletAddress },
  };
}

/** Payment links: a merchant's reusable request for payment, completed by payers on the hosted checkout page. */
export class PaymentLinkService {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly wallets: MasterWalletService,
    private readonly chains: ChainService,
    private readonly desk: CheckoutDesk,
    private readonly uow: UnitOfWork,
    /** Where the hosted page is served: `<base>/pay/<slug>`; empty: a path on the core host. */
    private readonly publicBaseUrl: string,
  ) {}

  async create(organizationId: string, input: CreatePaymentLink): Promise<PaymentLinkView> {
    const currency = input.currency.toUpperCase();
    const slug = input.slug ? checkSlug(input.slug) : generatedSlug(input.name);
    return this.uow.run('payment-link.create', async (trx) => {
      const terms = await resolveLinkTerms(trx, this.wallets, this.chains, organizationId, { ...input, currency, amount: input.amount ?? null });
      await claimSlug(trx, organizationId, slug);
      if (await PaymentLinkModel.query(trx).findOne({ slug })) throw slugTaken(slug);
      const row = await PaymentLinkModel.query(trx).insertAndFetch({
        organizationId,
        name: input.name,
        description: input.description ?? null,
        slug,
        channel: input.channel ?? 'api',
        currency,
        amount: input.amount ?? null,
        paymentLimit: input.paymentLimit ?? null,
        expiresAt: input.expiresAt ?? null,
        evmSettlementWalletId: terms.wallet.id,
        solanaSettlementWalletId: terms.solanaWallet?.id ?? null,
        allowedBlockchainIds: terms.allowedBlockchainIds,
        allowedAssetIds: terms.allowedAssetIds,
        redirectUrl: lowerCaseScheme(input.redirectUrl) ?? null,
        successMessage: input.successMessage ?? null,
        failureMessage: input.failureMessage ?? null,
        metadata: input.metadata ?? {},
        imgUrl: lowerCaseScheme(input.imgUrl) ?? null,
      } as Partial<PaymentLinkModel>);
      await this.outbox.publish(trx, { organizationId, type: 'payment_link.created', data: linkEventData(row, terms.wallet) });
      return this.view(row, trx);
    });
  }

  async list(organizationId: string, filter: PaymentLinkFilter): Promise<PageResult<PaymentLinkView>> {
    const masterWalletId = Ids.filter('masterWalletId', filter.masterWalletId);
    const q = PaymentLinkModel.query(this.db)
      .where({ organizationId })
      .whereNull('deletedAt')
      .modify((b) => {
        if (filter.isActive !== undefined && filter.isActive !== null) b.where('isActive', filter.isActive);
        if (masterWalletId) b.where((w) => w.where('evmSettlementWalletId', masterWalletId).orWhere('solanaSettlementWalletId', masterWalletId));
        if (filter.currency) b.where('currency', filter.currency.toUpperCase());
        if (filter.search) b.where((w) => w.whereILike('name', `%${escapeLike(filter.search!)}%`).orWhereILike('slug', `%${escapeLike(filter.search!)}%`));
      });
    const { rows, total } = await fetchPage<PaymentLinkModel>(q, filter, [{ column: 'createdAt', order: 'desc' }, { column: 'id' }]);
    return toPage(await this.views(rows), total, filter);
  }

  async get(organizationId: string, id: string): Promise<PaymentLinkView> {
    return this.view(await this.row(organizationId, id));
  }

  async getBySlug(organizationId: string, slug: string): Promise<PaymentLinkView> {
    const row = await PaymentLinkModel.query(this.db).findOne({ slug: slug.toLowerCase(), organizationId }).whereNull('deletedAt');
    if (!row) throw KeelError.notFound(LINK);
    return this.view(row);
  }

  async update(organizationId: string, id: string, input: UpdatePaymentLink): Promise<PaymentLinkView> {
    id = Ids.uuid(LINK, id);
    return this.uow.run('payment-link.update', async (trx) => {
      const current = await this.row(organizationId, id, trx, true);
      const patch: Partial<PaymentLinkModel> = { updatedAt: new Date() };
      const set = <K extends keyof PaymentLinkModel>(key: K, value: PaymentLinkModel[K] | undefined) => {
        if (value !== undefined) patch[key] = value;
      };
      set('name', input.name ?? undefined);
      set('description', input.description);
      set('channel', input.channel ?? undefined);
      set('paymentLimit', input.paymentLimit);
      set('expiresAt', input.expiresAt);
      set('redirectUrl', lowerCaseScheme(input.redirectUrl));
      set('successMessage', input.successMessage);
      set('failureMessage', input.failureMessage);
      set('metadata', input.metadata ?? undefined);
      set('imgUrl', lowerCaseScheme(input.imgUrl));
      set('isActive', input.isActive ?? undefined);
      // The link's own slug, in any letter case, is no change (and never taken by the link itself).
      const slug = input.slug != null ? checkSlug(input.slug) : current.slug;
      if (slug !== current.slug) {
        patch.slug = slug;
        await claimSlug(trx, organizationId, slug);
        if (await PaymentLinkModel.query(trx).findOne({ slug }).whereNot('id', id)) throw slugTaken(slug);
      }
      if (patch.paymentLimit != null) {
        // Payments being paid (held by their checkouts, under this link's lock) count as taken: the limit is never overrun.
        const held = await paymentsHeld(trx, id, new Date());
        if (patch.paymentLimit < current.paymentsConsumed + held) {
          throw KeelError.invalidField('paymentLimit', `must be at least the payments already consumed (${current.paymentsConsumed}) and being paid (${held})`);
        }
      }
      const termsChanged = ['currency', 'amount', 'evmSettlementWalletId', 'solanaSettlementWalletId', 'allowedBlockchainIds', 'allowedAssetIds'].some((k) => (input as Record<string, unknown>)[k] !== undefined);
      if (termsChanged) {
        const currency = (input.currency ?? current.currency).toUpperCase();
        const amount = input.amount !== undefined ? input.amount : current.amount === null ? null : normalizeDecimal(current.amount);
        // null takes the Solana wallet off the link; undefined keeps it.
        const solanaSettlementWalletId = input.solanaSettlementWalletId !== undefined ? input.solanaSettlementWalletId : current.solanaSettlementWalletId;
        const walletChanged =
          (input.evmSettlementWalletId != null && input.evmSettlementWalletId.toLowerCase() !== current.evmSettlementWalletId) ||
          (solanaSettlementWalletId?.toLowerCase() ?? null) !== (current.solanaSettlementWalletId ?? null);
        const chainsOrWallet = walletChanged || input.allowedBlockchainIds != null;
        const terms = await resolveLinkTerms(trx, this.wallets, this.chains, organizationId, {
          currency,
          amount,
          evmSettlementWalletId: input.evmSettlementWalletId ?? current.evmSettlementWalletId,
          solanaSettlementWalletId,
          allowedBlockchainIds: input.allowedBlockchainIds ?? (walletChanged ? null : current.allowedBlockchainIds),
          // New chains or a new currency choose their assets again unless they are named.
          allowedAssetIds: input.allowedAssetIds ?? (chainsOrWallet || input.currency != null ? null : current.allowedAssetIds),
        });
        Object.assign(patch, { currency, amount, evmSettlementWalletId: terms.wallet.id, solanaSettlementWalletId: terms.solanaWallet?.id ?? null, allowedBlockchainIds: terms.allowedBlockchainIds, allowedAssetIds: terms.allowedAssetIds });
      }
      const row = await PaymentLinkModel.query(trx).patchAndFetchById(id, patch);
      await this.publish(trx, row, 'payment_link.updated');
      return this.view(row, trx);
    });
  }

  /** isActive false: the hosted page and the public API refuse new checkouts; open ones run to their end. */
  async deactivate(organizationId: string, id: string): Promise<PaymentLinkView> {
    return this.update(organizationId, id, { isActive: false });
  }

  /** Deleted links are gone from the API and the public page; payments to open checkouts are still recorded. */
  async delete(organizationId: string, id: string): Promise<PaymentLinkView> {
    id = Ids.uuid(LINK, id);
    return this.uow.run('payment-link.delete', async (trx) => {
      await this.row(organizationId, id, trx, true);
      const row = await PaymentLinkModel.query(trx).patchAndFetchById(id, { deletedAt: new Date(), isActive: false, updatedAt: new Date() });
      await this.publish(trx, row, 'payment_link.deleted');
      return this.view(row, trx);
    });
  }

  async transfers(organizationId: string, id: string, filter: LinkTransferFilter): Promise<PageResult<PaymentLinkTransferView>> {
    const link = await this.row(organizationId, id);
    const { rows, total } = await this.desk.transferPageOfLink(link.id, filter);
    return toPage(await this.transferViews(rows), total, filter);
  }

  async checkouts(organizationId: string, id: string, filter: LinkCheckoutFilter): Promise<PageResult<PaymentLinkCheckoutView>> {
    const link = await this.row(organizationId, id);
    const { rows, total } = await this.desk.pageOfLink(link.id, filter);
    return toPage((await this.desk.views(rows)).map((v) => ({ ...v, paymentLinkId: link.id })), total, filter);
  }

  async transferViews(rows: CheckoutTransferModel[], trx: Knex | Knex.Transaction = this.db): Promise<PaymentLinkTransferView[]> {
    const checkouts = new Map((await this.desk.byIds(rows.map((r) => r.checkoutId), trx)).map((c) => [c.id, c]));
    const views = await this.desk.transferViews(rows, checkouts, trx);
    return views.map((v) => ({ ...v, paymentLinkId: checkouts.get(v.checkoutId)!.paymentLinkId!, checkoutStatus: checkouts.get(v.checkoutId)!.status }));
  }

  /** A link of the organisation that is not deleted, or 404. */
  async row(organizationId: string, id: string, trx: Knex | Knex.Transaction = this.db, forUpdate = false): Promise<PaymentLinkModel> {
    const q = PaymentLinkModel.query(trx).findOne({ id: Ids.uuid(LINK, id), organizationId }).whereNull('deletedAt');
    const row = await (forUpdate ? q.forUpdate() : q);
    if (!row) throw KeelError.notFound(LINK);
    return row;
  }

  async publish(trx: Knex.Transaction, link: PaymentLinkModel, type: string): Promise<void> {
    const wallet = await masterWalletLabel(trx, link.evmSettlementWalletId);
    await this.outbox.publish(trx, { organizationId: link.organizationId, type, data: linkEventData(link, wallet) });
  }

  checkoutUrl(slug: string): string {
    return `${this.publicBaseUrl.replace(/\/$/, '')}/pay/${slug}`;
  }

  async view(row: PaymentLinkModel, trx: Knex | Knex.Transaction = this.db): Promise<PaymentLinkView> {
    return (await this.views([row], trx))[0];
  }

  private async views(rows: PaymentLinkModel[], trx: Knex | Knex.Transaction = this.db): Promise<PaymentLinkView[]> {
    const chains = await this.chains.blockchainViews(rows.flatMap((r) => r.allowedBlockchainIds), trx);
    const assets = await this.chains.assetViews(rows.flatMap((r) => r.allowedAssetIds));
    return rows.map((r) => ({
      id: r.id,
      refId: r.refId,
      name: r.name,
      description: r.description,
      slug: r.slug,
      channel: r.channel,
      currency: r.currency,
      amount: r.amount === null ? null : normalizeDecimal(r.amount),
      paymentLimit: r.paymentLimit,
      paymentsConsumed: r.paymentsConsumed,
      expiresAt: r.expiresAt,
      evmSettlementWalletId: r.evmSettlementWalletId,
      solanaSettlementWalletId: r.solanaSettlementWalletId,
      allowedBlockchains: r.allowedBlockchainIds.map((id) => chains.get(id)).filter((c): c is BlockchainView => !!c),
      allowedAssets: r.allowedAssetIds.map((id) => assets.get(id)).filter((a): a is AssetView => !!a),
      redirectUrl: r.redirectUrl,
      successMessage: r.successMessage,
      failureMessage: r.failureMessage,
      metadata: r.metadata,
      imgUrl: r.imgUrl,
      isActive: r.isActive,
      checkoutUrl: this.checkoutUrl(r.slug),
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    }));
  }
}

function checkSlug(slug: string): string {
  const s = slug.toLowerCase();
  if (!SLUG.test(s)) throw KeelError.invalidField('slug', '3 to 64 lower-case letters, digits and hyphens, starting and ending with a letter or digit');
  return s;
}

/** The name in slug form with a random tail, so two links of one name never collide. */
function generatedSlug(name: string): string {
  const base = name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '');
  const tail = randomBytes(4).toString('hex');
  return base ? `${base}-${tail}` : `link-${tail}`;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A URL with its scheme in lower case ("HTTPS://shop.example" → "https://shop.example"), as every reader, the hosted page's checks among them, expects it. */
function lowerCaseScheme<T extends string | null | undefined>(url: T): T {
  return (typeof url === 'string' ? url.replace(/^[a-z][a-z0-9+.-]*:/i, (scheme) => scheme.toLowerCase()) : url) as T;
}
