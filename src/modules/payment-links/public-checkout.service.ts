import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import { normalizeDecimal } from '../../platform/decimal';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { ChainService } from '../chains';
import type { MasterWalletService } from '../wallets';
import type { AssetRef, ChainRef, CheckoutDesk, CheckoutView } from '../checkout';
import { askedUnits, assetRef, chainRef, CheckoutTransferKind, CheckoutTransferStatus, SETTLED_STATUSES, qrSvg, type CheckoutModel } from '../checkout';
import { PaymentLinkModel } from './payment-link.model';
import { paymentsHeld } from '../checkout';

const LINK = 'Payment link';
const SESSION = 'Checkout session';

/** What a payer sees of a link: never the organisation, the wallets, the metadata or the counts. */
export interface PublicLinkView {
  slug: string;
  name: string;
  description: string | null;
  imgUrl: string | null;
  /** null: the payer chooses the amount. */
  amount: string | null;
  currency: string;
  expiresAt: Date | null;
  /** false when the link is inactive, expired or has taken all its payments; `unavailableReason` says which. */
  available: boolean;
  unavailableReason: string | null;
  options: { blockchain: ChainRef; assets: AssetRef[] }[];
}

export interface StartCheckout {
  blockchainId?: unknown;
  assetId?: unknown;
  /** Only for a link with an open amount. */
  amount?: unknown;
}

export interface PublicSessionView extends Omit<CheckoutView, 'createdAt' | 'updatedAt'> {
  link: { slug: string; name: string; description: string | null; imgUrl: string | null };
  qrCodeUrl: string;
  /** The newest counted payment's confirmations, while one is confirming. */
  confirmations: { current: number; required: number } | null;
  /** Every deposit to the address, in its own asset and chain; only a PAYMENT counts. */
  transfers: { txHash: string; amount: string; asset: AssetRef; blockchain: ChainRef; kind: CheckoutTransferKind; status: CheckoutTransferStatus; confirmations: number; requiredConfirmations: number }[];
  /** The link's redirect URL, once the checkout is paid. */
  redirectUrl: string | null;
  /** The link's success message once paid, its failure message once expired or underpaid after the expiry. */
  message: string | null;
}

/**
 * The public side of payment links (no API key): a link's terms by slug, a new checkout session
 * for the payer's chain and asset, and the session's live state. Sessions are named by their
 * random id, which only the payer's page knows, and read only under the slug of the link they were
 * opened on: another link's session is 404, so no link's page shows another's address or redirect.
 */

export class PublicCheckoutService {
  constructor(
    private readonly db: Knex,
    private readonly chains: ChainService,
    private readonly wallets: MasterWalletService,
    private readonly desk: CheckoutDesk,
    private readonly uow: UnitOfWork,
    private readonly ttlSeconds: number,
  ) {}

  async link(slug: string): Promise<PublicLinkView> {
    const link = await this.bySlug(slug);
    const assets = await this.chains.assetViews(link.allowedAssetIds);
    // Only the chains where the settlement wallet of the chain's family is watched now: the link's terms name them as they were.
    const watched = new Set([...(await this.watchedChainIds(link.evmSettlementWalletId)), ...(await this.watchedChainIds(link.solanaSettlementWalletId))]);
    const options = new Map<string, { blockchain: ChainRef; assets: AssetRef[] }>();
    for (const id of link.allowedAssetIds) {
      const a = assets.get(id);
      if (!a || !watched.has(a.blockchainId)) continue;
      const chain = options.get(a.blockchainId) ?? { blockchain: chainRef(a), assets: [] };
      chain.assets.push(assetRef(a));
      options.set(a.blockchainId, chain);
    }
    const reason = await this.unavailable(this.db, link);
    return {
      slug: link.slug,
      name: link.name,
      description: link.description,
      imgUrl: link.imgUrl,
      amount: link.amount === null ? null : normalizeDecimal(link.amount),
      currency: link.currency,
      expiresAt: link.expiresAt,
      available: !reason,
      unavailableReason: reason?.message ?? null,
      options: [...options.values()],
    };
  }

  /**
   * Opens a session. `admit` is called once the session is known to open (the link takes it, the
   * body is valid, the chain is watched) and before anything is written: what it throws refuses the
   * session (the link's session budget, CheckoutBudgets.admitSession), so a refused request spends none of it.
   */
  async start(slug: string, input: StartCheckout, admit: () => Promise<void> = async () => {}): Promise<PublicSessionView> {
    const link = await this.bySlug(slug);
    const refusal = await this.unavailable(this.db, link);
    if (refusal) throw refusal;
    const blockchainId = typeof input.blockchainId === 'string' ? input.blockchainId.toLowerCase() : '';
    const assetId = typeof input.assetId === 'string' ? input.assetId.toLowerCase() : '';
    if (!link.allowedBlockchainIds.includes(blockchainId)) throw KeelError.invalidField('blockchainId', 'not one of the blockchains this link accepts');
    const asset = (await this.chains.assetViews([assetId].filter(Ids.isUuid))).get(assetId);
    if (!asset || !link.allowedAssetIds.includes(asset.id) || asset.blockchainId !== blockchainId) throw KeelError.invalidField('assetId', 'not one of the assets this link accepts on that blockchain');
    let amount: string;
    if (link.amount !== null) {
      amount = normalizeDecimal(link.amount);
      if (input.amount !== undefined && input.amount !== null && input.amount !== amount) throw KeelError.invalidField('amount', `this link asks for a fixed amount (${amount})`);
    } else {
      if (input.amount === undefined || input.amount === null || input.amount === '') throw KeelError.validation([{ field: 'amount', error: 'is required: this link lets the payer choose the amount' }]);
      if (typeof input.amount !== 'string') throw KeelError.invalidField('amount', 'must be a decimal string');
      amount = input.amount;
    }
    const expectedRaw = askedUnits(amount, asset);
    const ttlEnd = Date.now() + this.ttlSeconds * 1000;
    const expiresAt = new Date(link.expiresAt ? Math.min(ttlEnd, link.expiresAt.getTime()) : ttlEnd);

    // A session reserves none of a limited link's payments (a payment to it does, when it is
    // recorded: PaymentLinkCheckouts.admits), so sessions are opened concurrently without a lock.
    // The address is derived under the settlement wallet of the asset's chain family (the link's terms allow a Solana cluster only with its Solana wallet).
    const masterWalletId = settlementWalletOf(link, asset.blockchain.isEvmCompatible);
    if (!masterWalletId) throw KeelError.invalidField('blockchainId', 'not one of the blockchains this link accepts');
    // A payment on a chain Keel does not watch the settlement wallet on would never be recorded.
    const notWatched = () => new KeelError('PAYMENT_FAILED', `This payment link takes no payments on ${asset.blockchain.name} now`);
    if (!(await this.watchedChainIds(masterWalletId)).includes(blockchainId)) throw notWatched();
    await admit();
    const checkout = await this.uow.run('payment-link.checkout', async (trx) => {
      // Read again, held until the session commits: monitoring turned off meanwhile refuses it.
      if (!(await this.wallets.heldWatchedChainIds(trx, masterWalletId)).includes(blockchainId)) throw notWatched();
      const address = await this.desk.newAddress(trx, link.organizationId, masterWalletId, `Checkout ${link.slug}`, { paymentLinkId: link.id, purpose: 'payment_link_checkout' });
      const checkout = { organizationId: link.organizationId, masterWalletId, blockchainId, assetId: asset.id, expectedRaw, expiresAt, paymentLinkId: link.id };
      return this.desk.insert(trx, { ...checkout, label: link.name, message: link.description }, address);
    });
    return this.sessionView(checkout, link);
  }

  async session(slug: string, id: string): Promise<PublicSessionView> {
    const { checkout, link } = await this.checkout(slug, id);
    return this.sessionView(checkout, link);
  }

  async qrCode(slug: string, id: string): Promise<string> {
    const view = await this.desk.view((await this.checkout(slug, id)).checkout);
    return qrSvg(view.paymentUri);
  }

  /** Whether `id` names a session of the link at `slug` (what the hosted page is asked to resume). */
  async isSessionOf(slug: string, id: string): Promise<boolean> {
    if (!Ids.isUuid(id)) return false;
    const row = await this.desk.ofLink(id.toLowerCase(), this.db('payment_links').select('id').where({ slug: String(slug).toLowerCase() }).whereNull('deletedAt'));
    return !!row;
  }

  /** A session of the link at `slug`; a malformed, unknown or another link's session is 404 alike. */
  private async checkout(slug: string, id: string): Promise<{ checkout: CheckoutModel; link: PaymentLinkModel }> {
    const sessionId = Ids.uuid(SESSION, id);
    const link = await this.bySlug(slug);
    const checkout = await this.desk.ofLink(sessionId, link.id);
    if (!checkout) throw KeelError.notFound(SESSION);
    return { checkout, link };
  }

  private async sessionView(checkout: CheckoutModel, link: PaymentLinkModel): Promise<PublicSessionView> {
    const { createdAt: _c, updatedAt: _u, ...view } = await this.desk.view(checkout);
    const transfers = await this.desk.transferViews(await this.desk.transfersOf([checkout.id]), new Map([[checkout.id, checkout]]));
    const confirming = transfers.filter((t) => t.kind === 'PAYMENT' && t.status === 'CONFIRMING').pop();
    const settled = SETTLED_STATUSES.includes(checkout.status);
    const failed = checkout.status === 'EXPIRED' || (checkout.status === 'UNDERPAID' && checkout.expiresAt.getTime() <= Date.now());
    return {
      ...view,
      link: { slug: link.slug, name: link.name, description: link.description, imgUrl: link.imgUrl },
      qrCodeUrl: `/v1/checkout/links/${encodeURIComponent(link.slug)}/sessions/${checkout.id}/qr.svg`,
      confirmations: confirming ? { current: confirming.confirmations, required: confirming.requiredConfirmations } : null,
      transfers: transfers.map((t) => ({
        txHash: t.txHash,
        amount: t.amount,
        asset: t.asset,
        blockchain: t.blockchain,
        kind: t.kind,
        status: t.status,
        confirmations: t.confirmations,
        requiredConfirmations: t.requiredConfirmations,
      })),
      redirectUrl: settled ? link.redirectUrl : null,
      message: settled ? link.successMessage : failed ? link.failureMessage : null,
    };
  }

  private async watchedChainIds(masterWalletId: string | null): Promise<string[]> {
    return masterWalletId ? this.wallets.watchedChainIds(masterWalletId) : [];
  }

  private async bySlug(slug: string): Promise<PaymentLinkModel> {
    const row = await PaymentLinkModel.query(this.db).findOne({ slug: String(slug).toLowerCase() }).whereNull('deletedAt');
    if (!row) throw KeelError.notFound(LINK);
    return row;
  }

  /**
   * Why the link takes no new checkout now, or undefined. Open sessions hold none of a limited
   * link's payments: only the payments consumed and those held by a checkout whose payment is
   * recorded (confirming, or underpaid and open to a top-up) do, so anonymous sessions can never
   * keep a payer out. Read without a lock: a session admitted here on the last free payment only
   * counts if its payment is still the first recorded (PaymentLinkCheckouts.admits).
   */
  private async unavailable(db: Knex | Knex.Transaction, link: PaymentLinkModel): Promise<KeelError | undefined> {
    if (!link.isActive) return new KeelError('PAYMENT_FAILED', 'This payment link is not active');
    if (link.expiresAt && link.expiresAt.getTime() <= Date.now()) return new KeelError('PAYMENT_EXPIRED', 'This payment link has expired');
    if (link.paymentLimit !== null && link.paymentsConsumed + (await paymentsHeld(db, link.id, new Date())) >= link.paymentLimit) {
      return new KeelError('PAYMENT_FAILED', link.paymentsConsumed >= link.paymentLimit ? 'This payment link has taken all its payments' : 'Every remaining payment of this link is being paid; try again later', {
        paymentLimit: link.paymentLimit,
        paymentsConsumed: link.paymentsConsumed,
      });
    }
    return undefined;
  }
}

/** The link's settlement wallet for a chain of one family (the link's terms allow a Solana cluster only with its Solana wallet). */
function settlementWalletOf(link: PaymentLinkModel, evm: boolean): string | null {
  return evm ? link.evmSettlementWalletId : link.solanaSettlementWalletId;
}
