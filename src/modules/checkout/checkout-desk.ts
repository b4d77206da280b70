import { Knex } from 'knex';
import { formatScaled } from '../../platform/decimal';
import type { AddressService } from '../wallets';
import type { ChainService, AssetView } from '../chains';
import { CheckoutModel, CheckoutTransferModel, SETTLED_STATUSES, type SolanaPayTerms } from './checkout.model';
import { newSolanaPayReference, solanaPayUri } from './solana-pay-uri';
import type { CheckoutStatus, CheckoutTransferKind, CheckoutTransferStatus } from './checkout.domain';
import { lateCause, statusOf, whyNotCounted } from './checkout-status';
import { blockTimesOf } from '../deposits';
import { fetchPage } from '../../platform/db/fetch-page';
import type { PageWindow } from '../../platform/paging';

/** What a checkout's owner (a payment link, a payment intent) does when the checkout moves. */
export interface CheckoutOwner {
  /** The checkout changed status; inside the transaction that changed it. */
  statusChanged(trx: Knex.Transaction, checkout: CheckoutModel, previous: CheckoutStatus): Promise<void>;
  /**
   * Whether a payment just recorded to the checkout may count (a payment link's paymentLimit);
   * false makes it OVER_LIMIT. Inside the deposit watcher's transaction, under the checkout's lock.
   */
  admits(trx: Knex.Transaction, checkout: CheckoutModel): Promise<boolean>;
  /** A deposit to the checkout was recorded (`created`) or changed (confirmations, a reorg). */
  transferChanged(trx: Knex.Transaction, checkout: CheckoutModel, transfer: CheckoutTransferModel, created: boolean): Promise<void>;
}

export type CheckoutOwnerKind = 'link' | 'intent';

export interface NewCheckout {
  organizationId: string;
  masterWalletId: string;
  blockchainId: string;
  assetId: string;
  expectedRaw: bigint;
  expiresAt: Date;
  paymentLinkId?: string;
  paymentIntentId?: string;
  /** What the payer's wallet shows of a Solana Pay request (a checkout on Solana): the merchant or link, and a line about it. */
  label: string;
  message?: string | null;
}

export interface CheckoutAddress {
  id: string;
  address: string;
}

export interface ChainRef {
  id: string;
  name: string;
  slug: string;
  /** null on Solana. */
  chainId: number | null;
}

export interface AssetRef {
  id: string;
  symbol: string;
  name: string;
  decimals: number;
  /** The token contract; the zero address for the native coin. */
  address: string;
}

/** A checkout as the API shows it. Amounts are decimal strings in the asset's units. */
export interface CheckoutView {
  id: string;
  status: CheckoutStatus;
  blockchain: ChainRef;
  asset: AssetRef;
  /** Where to pay: a fresh address under the settlement wallet, never reused. */
  depositAddress: string;
  amount: string;
  amountReceived: string;
  amountConfirming: string;
  /** What is still missing (0 once paid). */
  amountDue: string;
  /** What arrived beyond the amount (OVERPAID). */
  amountOverpaid: string;
  /** Deposits to the address that are not counted (any kind but PAYMENT, not reverted): see the transfers. */
  transfersNotCounted: number;
  /** The payment request for wallets (the QR code encodes it): EIP-681 on EVM, a Solana Pay transfer request on Solana. */
  paymentUri: string;
  expiresAt: Date;
  paidAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A deposit to a checkout address, in its own asset and chain (which may not be the checkout's). */
export interface CheckoutTransferView {
  id: string;
  checkoutId: string;
  kind: CheckoutTransferKind;
  /** Why it is not counted; null for a PAYMENT. */
  notCountedReason: string | null;
  status: CheckoutTransferStatus;
  txHash: string;
  from: string;
  to: string;
  amount: string;
  rawAmount: string;
  asset: AssetRef;
  blockchain: ChainRef;
  blockNumber: string;
  confirmations: number;
  requiredConfirmations: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The AssetRef view of an asset, its only mapper (checkouts, and the public checkout's options). */
export function assetRef(a: AssetView): AssetRef {
  return { id: a.id, symbol: a.symbol, name: a.name, decimals: a.decimals, address: a.address };
}

/** The ChainRef view of an asset's chain, its only mapper. */
export function chainRef(a: AssetView): ChainRef {
  return { id: a.blockchain.id, name: a.blockchain.name, slug: a.blockchain.slug, chainId: a.blockchain.chainId };
}

/** EIP-681: `ethereum:<token>@<chain>/transfer?address=…&uint256=…`, or the native `ethereum:<address>@<chain>?value=…`. */
export function paymentUri(asset: AssetView, to: string, raw: bigint): string {
  const chain = asset.blockchain.chainId;
  return asset.isNative ? `ethereum:${to}@${chain}?value=${raw}` : `ethereum:${asset.address}@${chain}/transfer?address=${to}&uint256=${raw}`;
}

/**
 * The checkout mechanics payment links and payment intents share: a fresh deposit address under
 * the settlement wallet, the exact amount expected there, the expiry, and every status change,
 * which it reports to the checkout's owner. Deposits reach it through CheckoutDeposits (the
 * deposit watcher's listener) and the CheckoutWatcher (detection, confirmations, expiry).
 */
export class CheckoutDesk {
  private readonly owners = new Map<CheckoutOwnerKind, CheckoutOwner>();

  constructor(
    private readonly db: Knex,
    private readonly addresses: AddressService,
    private readonly chains: ChainService,
    /** Confirmations a payment needs to count (at least the chain's own). */
    readonly paymentConfirmations: number,
  ) {}

  own(kind: CheckoutOwnerKind, owner: CheckoutOwner): void {
    this.owners.set(kind, owner);
  }

  /** A fresh deposit address for a checkout, in the transaction that records the checkout (a refused checkout leaves none). */
  async newAddress(trx: Knex.Transaction, organizationId: string, masterWalletId: string, name: string, metadata: Record<string, unknown>): Promise<CheckoutAddress> {
    const created = await this.addresses.createIn(trx, organizationId, masterWalletId, { name, metadata });
    return { id: created.id, address: created.address };
  }

  /**
   * Records the checkout in the owner's transaction. On Solana it records the checkout's Solana Pay
   * request too: a fresh reference key (the payer's wallet adds it to the transfer) and its label.
   */
  async insert(trx: Knex.Transaction, input: NewCheckout, address: CheckoutAddress): Promise<CheckoutModel> {
    const asset = (await this.chains.assetViews([input.assetId], trx)).get(input.assetId);
    const solanaPay: SolanaPayTerms | null = asset && !asset.blockchain.isEvmCompatible ? { reference: newSolanaPayReference(), label: input.label, message: input.message ?? null } : null;
    return CheckoutModel.query(trx).insertAndFetch({
      solanaPay,
      organizationId: input.organizationId,
      paymentLinkId: input.paymentLinkId ?? null,
      paymentIntentId: input.paymentIntentId ?? null,
      masterWalletId: input.masterWalletId,
      blockchainId: input.blockchainId,
      assetId: input.assetId,
      addressId: address.id,
      depositAddress: address.address,
      expectedRaw: input.expectedRaw.toString(),
      expiresAt: input.expiresAt,
    } as Partial<CheckoutModel>);
  }

  async locked(trx: Knex.Transaction, id: string): Promise<CheckoutModel> {
    return CheckoutModel.query(trx).findById(id).forUpdate().throwIfNotFound();
  }

  /**
   * Applies `patch` (amounts) and moves the checkout to the status they put it in, telling the owner
   * when it changed. The caller holds the checkout's row lock.
   */
  async update(trx: Knex.Transaction, checkout: CheckoutModel, patch: Partial<CheckoutModel>, now = new Date()): Promise<CheckoutModel> {
    const status = statusOf({ ...checkout, ...patch } as CheckoutModel, now);
    const paidAt = SETTLED_STATUSES.includes(status) ? (checkout.paidAt ?? now) : null;
    const updated = await CheckoutModel.query(trx).patchAndFetchById(checkout.id, { ...patch, status, paidAt, updatedAt: now });
    if (status !== checkout.status) await this.ownerOf(updated).statusChanged(trx, updated, checkout.status);
    return updated;
  }

  /** Cancels an open checkout (a cancelled intent): it counts nothing from now on. */
  async cancel(trx: Knex.Transaction, checkout: CheckoutModel): Promise<CheckoutModel> {
    return this.update(trx, checkout, { status: 'CANCELLED' });
  }

  async admits(trx: Knex.Transaction, checkout: CheckoutModel): Promise<boolean> {
    return this.ownerOf(checkout).admits(trx, checkout);
  }

  async transferChanged(trx: Knex.Transaction, checkout: CheckoutModel, transfer: CheckoutTransferModel, created: boolean): Promise<void> {
    await this.ownerOf(checkout).transferChanged(trx, checkout, transfer, created);
  }

  async views(rows: CheckoutModel[], trx: Knex | Knex.Transaction = this.db): Promise<CheckoutView[]> {
    const assets = await this.chains.assetViews(rows.map((r) => r.assetId));
    const notCounted = await this.notCounted(rows.map((r) => r.id), trx);
    return rows.map((c) => {
      const asset = assets.get(c.assetId)!;
      const expected = BigInt(c.expectedRaw);
      const received = BigInt(c.receivedRaw);
      const fmt = (v: bigint) => formatScaled(v, asset.decimals);
      return {
        id: c.id,
        status: c.status,
        blockchain: chainRef(asset),
        asset: assetRef(asset),
        depositAddress: c.depositAddress,
        amount: fmt(expected),
        amountReceived: fmt(received),
        amountConfirming: fmt(BigInt(c.confirmingRaw)),
        amountDue: fmt(received >= expected ? 0n : expected - received),
        amountOverpaid: fmt(received > expected ? received - expected : 0n),
        transfersNotCounted: notCounted.get(c.id) ?? 0,
        paymentUri: c.solanaPay
          ? solanaPayUri({ recipient: c.depositAddress, amount: fmt(expected), splToken: asset.isNative ? null : asset.address, reference: [c.solanaPay.reference], label: c.solanaPay.label, message: c.solanaPay.message })
          : paymentUri(asset, c.depositAddress, expected),
        expiresAt: c.expiresAt,
        paidAt: c.paidAt,
        createdAt: c.createdAt,
        updatedAt: c.updatedAt,
      };
    });
  }

  async view(row: CheckoutModel, trx: Knex | Knex.Transaction = this.db): Promise<CheckoutView> {
    return (await this.views([row], trx))[0];
  }

  /** How many deposits to each checkout are recorded and not counted (reverted ones aside). */
  private async notCounted(checkoutIds: string[], trx: Knex | Knex.Transaction): Promise<Map<string, number>> {
    if (!checkoutIds.length) return new Map();
    const rows: { checkoutId: string; n: string }[] = await trx('checkout_transfers')
      .whereIn('checkoutId', checkoutIds)
      .whereNot('kind', 'PAYMENT')
      .whereNot('status', 'REVERTED')
      .groupBy('checkoutId')
      .select('checkoutId', trx.raw('count(*) as n'));
    return new Map(rows.map((r) => [r.checkoutId, Number(r.n)]));
  }

  /** Checkouts by id (the owners' reads: the checkouts table is this module's). */
  async byIds(ids: string[], trx: Knex | Knex.Transaction = this.db): Promise<CheckoutModel[]> {
    return ids.length ? CheckoutModel.query(trx).findByIds([...new Set(ids)]) : [];
  }

  /** A page of a payment link's checkouts, newest first. */
  async pageOfLink(paymentLinkId: string, filter: PageWindow & { status?: CheckoutStatus | null }): Promise<{ rows: CheckoutModel[]; total: number }> {
    const q = CheckoutModel.query(this.db)
      .where({ paymentLinkId })
      .modify((b) => (filter.status ? b.where('status', filter.status) : b));
    return fetchPage<CheckoutModel>(q, filter, [{ column: 'createdAt', order: 'desc' }, { column: 'id' }]);
  }

  /** A page of the deposits to a payment link's checkouts, newest first. */
  async transferPageOfLink(paymentLinkId: string, filter: PageWindow & { kind?: CheckoutTransferKind | null; status?: CheckoutTransferStatus | null }): Promise<{ rows: CheckoutTransferModel[]; total: number }> {
    const q = CheckoutTransferModel.query(this.db)
      .whereIn('checkoutId', CheckoutModel.query(this.db).select('id').where({ paymentLinkId }))
      .modify((b) => {
        if (filter.kind) b.where('kind', filter.kind);
        if (filter.status) b.where('status', filter.status);
      });
    return fetchPage<CheckoutTransferModel>(q, filter, [{ column: 'createdAt', order: 'desc' }, { column: 'id' }]);
  }

  /** The checkout `id` when it belongs to one of these payment links (an id, or a query of ids), else undefined. */
  async ofLink(id: string, paymentLinkIds: string | Knex.QueryBuilder): Promise<CheckoutModel | undefined> {
    const q = CheckoutModel.query(this.db).findById(id);
    return typeof paymentLinkIds === 'string' ? q.where({ paymentLinkId: paymentLinkIds }) : q.whereIn('paymentLinkId', paymentLinkIds);
  }

  /** The checkouts of these payment intents. */
  async ofIntents(paymentIntentIds: string[], trx: Knex | Knex.Transaction = this.db): Promise<CheckoutModel[]> {
    return CheckoutModel.query(trx).whereIn('paymentIntentId', paymentIntentIds);
  }

  /** The checkout of the organisation's payment intent, locked (FOR UPDATE) in the caller's transaction, or undefined. */
  async lockedOfIntent(trx: Knex.Transaction, organizationId: string, paymentIntentId: string): Promise<CheckoutModel | undefined> {
    return CheckoutModel.query(trx).findOne({ paymentIntentId, organizationId }).forUpdate();
  }

  /** The ids of the payment intents whose checkout pays into this master wallet, as a subquery. */
  intentIdsPayingInto(masterWalletId: string): Knex.QueryBuilder {
    return this.db('checkouts').select('paymentIntentId').where({ masterWalletId }).whereNotNull('paymentIntentId');
  }

  /** The deposits to these checkouts, oldest first. */
  async transfersOf(checkoutIds: string[], trx: Knex | Knex.Transaction = this.db): Promise<CheckoutTransferModel[]> {
    if (!checkoutIds.length) return [];
    return CheckoutTransferModel.query(trx).whereIn('checkoutId', checkoutIds).orderBy([{ column: 'createdAt' }, { column: 'id' }]);
  }

  async transferViews(transfers: CheckoutTransferModel[], checkouts: Map<string, CheckoutModel>, db: Knex | Knex.Transaction = this.db): Promise<CheckoutTransferView[]> {
    const assets = await this.chains.assetViews([...[...checkouts.values()].map((c) => c.assetId), ...transfers.map((t) => t.assetId)]);
    // A late deposit to a cancelled checkout may have been mined in time: its block's time says why it is late.
    const lateToCancelled = transfers.filter((t) => t.kind === 'LATE' && checkouts.get(t.checkoutId)!.status === 'CANCELLED');
    const blockTimes = await blockTimesOf(db, lateToCancelled.map((t) => t.chainTransferId));
    return transfers.map((t) => {
      const checkout = checkouts.get(t.checkoutId)!;
      const asked = assets.get(checkout.assetId)!;
      const paid = assets.get(t.assetId)!;
      const blockTime = blockTimes.get(t.chainTransferId);
      return {
        id: t.id,
        checkoutId: t.checkoutId,
        kind: t.kind,
        notCountedReason: whyNotCounted(t.kind, { symbol: paid.symbol, chain: paid.blockchain.name }, { symbol: asked.symbol, chain: asked.blockchain.name }, blockTime && lateCause(checkout, blockTime)),
        status: t.status,
        txHash: t.txHash,
        from: t.fromAddress,
        to: checkout.depositAddress,
        amount: formatScaled(BigInt(t.rawValue), paid.decimals),
        rawAmount: t.rawValue,
        asset: assetRef(paid),
        blockchain: chainRef(paid),
        blockNumber: String(t.blockNumber),
        confirmations: t.confirmations,
        requiredConfirmations: t.requiredConfirmations,
        createdAt: t.createdAt,
        updatedAt: t.updatedAt,
      };
    });
  }

  private ownerOf(checkout: CheckoutModel): CheckoutOwner {
    const owner = this.owners.get(checkout.paymentLinkId ? 'link' : 'intent');
    if (!owner) throw new Error(`no owner registered for the checkout ${checkout.id}`);
    return owner;
  }
}
