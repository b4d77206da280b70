import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { formatScaled, parseUnits } from '../../platform/decimal';
import { toPage, PageResult, PageWindow } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import type { ChainNetworks, ChainNetwork } from '../chains/chain-networks';
import type { ChainService, AssetView, BlockchainView } from '../chains/chain.service';
import { readBalances } from '../wallets/balance-reader';
import type { SendingWallet, SendingWallets, WalletSource } from '../wallets/sending-wallets';
import { checkSanctions, checkTransferPolicy, PolicyLine, RecipientScreen } from './transfer-policy';
import { transactionRequest } from './transaction-request';
import { checksummedAddress } from './evm-address';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { Hook } from '../../platform/events/hooks';

export type TransferKind = 'withdrawal' | 'sweep' | 'gas_topup' | 'agent_payment' | 'swap' | 'trading_deposit';

/** A line Keel queues itself: a send of `rawAmount`, or a contract `call` (a DEX approval or swap) that moves it. */
export interface QueuedLine {
  asset: AssetView;
  recipient: string;
  rawAmount: bigint;
  /** Runs only after this line confirmed. */
  afterItemId?: string;
  call?: { to: string; data: string; value: bigint };
}

/** One line of a transfer as the caller asks for it: whole units of an asset to a recipient. */
export interface TransferLine {
  assetId: string;
  recipient: string;
  amount: string;
}

export interface TransferFilter extends PageWindow {
  status?: string;
  masterWalletId?: string;
}

export interface TransferItemView {
  id: string;
  position: number;
  asset: AssetView;
  recipient: string;
  amount: string;
  rawAmount: string;
  status: string;
  txHash: string | null;
  replacedTxHashes: string[];
  nonce: string | null;
  blockNumber: string | null;
  gasFee: string | null;
  error: string | null;
  submittedAt: Date | null;
}

/** The API's transfer resource: an outgoing withdrawal, sweep or gas top-up and its lines. */
export interface TransferView {
  id: string;
  kind: string;
  status: string;
  masterWalletId: string;
  addressId: string | null;
  blockchainId: string;
  fromAddress: string;
  note: string | null;
  items: TransferItemView[];
  decidedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface GasEstimateView {
  assets: { amount: string; asset: AssetView; blockchain: BlockchainView; destinationAddress: string }[];
  estimatedFee: { amount: string; value: string; callGasLimit: string; verificationGasLimi: string };
}

/** A line's claim on a wallet's funds in the trading ledger. */
export interface FundsLine {
  organizationId: string;
  /** The deposit address id, or the master wallet id for its own address. */
  walletId: string;
  assetId: string;
  rawAmount: bigint;
  itemId: string;
}

/**
 * Where transfers take their funds from besides the chain: the trading ledger, so that what is
 * locked in open orders cannot also be withdrawn.
 */
export interface TransferFunds {
  spendable(trx: Knex.Transaction, walletId: string, assetId: string): Promise<bigint>;
  /** Takes the lines' amounts; INSUFFICIENT_FUNDS when the wallet's available balance is short. */
  reserve(trx: Knex.Transaction, lines: FundsLine[]): Promise<void>;
  /** Gives back what reserve took (a rejected or failed line). */
  release(trx: Knex.Transaction, lines: FundsLine[]): Promise<void>;
}

/** A line checked and priced: the asset it moves and its amount in the smallest unit. */
export interface PricedLine extends PolicyLine {
  asset: AssetView;
  recipient: string;
}

/** Told of a transfer an administrator decided on (rejected, or approved): its kind and its lines. */
export type TransferRejectionListener = (trx: Knex.Transaction, rejected: { kind: TransferKind; itemIds: string[] }) => Promise<void>;

/** A send checked and priced, ready to record (TransferService.prepare). */
export interface PreparedTransfer {
  wallet: SendingWallet;
  network: ChainNetwork;
  lines: PricedLine[];
  status: 'PENDING_APPROVAL' | 'QUEUED';
}

/** Statuses a line passes through before it is final. */
export const OPEN_ITEM_STATUSES = ['PENDING_APPROVAL', 'QUEUED', 'SIGNED', 'SUBMITTED'] as const;

/**
 * Withdrawals: checked against the wallet's security configuration and its on-chain balance, then
 * queued (or held for approval) as one transaction per line for the transaction sender.
 */
export class TransferService {
  constructor(
    private readonly db: Knex,
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    private readonly funds: TransferFunds,
    private readonly uow: UnitOfWork,
    private readonly sanctions: RecipientScreen,
  ) {}

  /** Inside the rejecting transaction: a listener's error rolls the rejection back. */
  private readonly rejected = new Hook<Parameters<TransferRejectionListener>>();

  /** Tells `listener` of each rejected transfer's lines, inside the transaction that rejects them (an agent payment fails with them). */
  onRejected(listener: TransferRejectionListener): void {
    this.rejected.add(listener);
  }

  /** Inside the approving transaction: a listener may bring a line up to date before it is queued, or refuse the approval. */
  private readonly approved = new Hook<Parameters<TransferRejectionListener>>();

  /** Tells `listener` of each approved transfer's lines, inside the transaction that queues them (a held swap gets a fresh deadline). */
  onApproved(listener: TransferRejectionListener): void {
    this.approved.add(listener);
  }

  async spendable(trx: Knex.Transaction, walletId: string, assetId: string): Promise<bigint> {
    return this.funds.spendable(trx, walletId, assetId);
  }

  async create(organizationId: string, source: WalletSource, input: { assets: TransferLine[]; note?: string }): Promise<TransferView> {
    const { transferId } = await this.uow.runChecked(
      'withdrawal',
      () => this.check(organizationId, source, input),
      (trx, { wallet, network, lines, status }) => this.insert(trx, wallet, network.blockchainId, 'withdrawal', status, lines, input.note ?? null),
    );
    return this.get(organizationId, transferId);
  }

  /**
   * A send checked as a withdrawal is (the wallet, its chain, its security configuration, the
   * chain balance) but not yet recorded: for another module that records it with its own state
   * change (`enqueuePrepared`, an agent payment).
   */
  async prepare(organizationId: string, source: WalletSource, assets: TransferLine[]): Promise<PreparedTransfer> {
    return this.check(organizationId, source, { assets });
  }

  /** Records a prepared send inside the caller's transaction; queued, or held under requireApprovalForTransfers. */
  async enqueuePrepared(trx: Knex.Transaction, prepared: PreparedTransfer, kind: TransferKind, note: string | null): Promise<{ transferId: string; itemIds: string[] }> {
    return this.insert(trx, prepared.wallet, prepared.network.blockchainId, kind, prepared.status, prepared.lines, note);
  }

  private async check(organizationId: string, source: WalletSource, input: { assets: TransferLine[] }): Promise<PreparedTransfer> {
    const wallet = await this.wallets.resolve(organizationId, source);
    const { network, lines } = await this.price(wallet, input.assets);
    checkSanctions(this.sanctions, lines);
    checkTransferPolicy(wallet.configurations.security, lines);
    await this.ensureFunds(wallet, network, lines);
    const status = wallet.configurations.security.requireApprovalForTransfers ? ('PENDING_APPROVAL' as const) : ('QUEUED' as const);
    return { wallet, network, lines, status };
  }

  /** Records a transfer Keel decided on itself (sweeps, gas top-ups), inside the caller's transaction. */
  async enqueue(
    trx: Knex.Transaction,
    wallet: SendingWallet,
    blockchainId: string,
    kind: TransferKind,
    lines: QueuedLine[],
    status: 'QUEUED' | 'PENDING_APPROVAL' = 'QUEUED',
  ): Promise<{ transferId: string; itemIds: string[] }> {
    checkSanctions(this.sanctions, lines);
    return this.insert(trx, wallet, blockchainId, kind, status, lines, null);
  }

  /**
   * What is already on its way out of the address in this asset (lines not yet final); with
   * `callTo`, only the lines that are calls of that contract (the swaps through one DEX router).
   */
  async inFlight(trx: Knex.Transaction, address: string, blockchainId: string, assetId: string, callTo?: string): Promise<bigint> {
    return (await this.inFlightByAsset(trx, address, blockchainId, [assetId], callTo)).get(assetId) ?? 0n;
  }

  /** `inFlight` of several assets at once, by asset id (an asset with nothing on its way is absent). */
  private async inFlightByAsset(db: Knex | Knex.Transaction, address: string, blockchainId: string, assetIds: string[], callTo?: string): Promise<Map<string, bigint>> {
    const rows: { assetId: string; total: string }[] = await db('transfer_items as i')
      .join('transfers as t', 't.id', 'i.transferId')
      .where({ 't.fromAddress': address, 't.blockchainId': blockchainId })
      .whereIn('i.assetId', assetIds)
      .modify((q) => (callTo ? q.where('i.callTo', callTo) : q))
      .whereIn('i.status', OPEN_ITEM_STATUSES)
      .groupBy('i.assetId')
      .select('i.assetId', db.raw('sum(i.raw_amount)::text as total'));
    return new Map(rows.map((r) => [r.assetId, BigInt(r.total)]));
  }

  async estimateGas(organizationId: string, masterWalletId: string, assets: TransferLine[]): Promise<GasEstimateView> {
    const wallet = await this.wallets.resolve(organizationId, { masterWalletId });
    const { network, lines } = await this.price(wallet, assets);
    const [fees, limits] = await Promise.all([
      network.provider.getFeeData(),
      Promise.all(lines.map((l) => network.provider.estimateGas({ from: wallet.address, ...transactionRequest(l.asset, l.recipient, l.rawAmount) }).catch(() => null))),
    ]);
    const failed = limits.findIndex((l) => l === null);
    if (failed >= 0) throw new KeelError('INSUFFICIENT_FUNDS', `assets.${failed}: the chain refuses this transfer from ${wallet.address} (balance too low?)`, { fields: [{ field: `assets.${failed}`, error: 'INVALID_FIELD' }] });
    const gas = (limits as bigint[]).reduce((a, b) => a + b, 0n);
    const wei = gas * (fees.maxFeePerGas ?? fees.gasPrice ?? 0n);
    const chain = await this.chains.getBlockchain(network.blockchainId);
    return {
      assets: lines.map((l) => ({ amount: formatScaled(l.rawAmount, l.asset.decimals), asset: l.asset, blockchain: chain, destinationAddress: l.recipient })),
      estimatedFee: { amount: formatScaled(wei, 18), value: wei.toString(), callGasLimit: gas.toString(), verificationGasLimi: '0' },
    };
  }

  async list(organizationId: string, args: TransferFilter): Promise<PageResult<TransferView>> {
    const masterWalletId = Ids.filter('masterWalletId', args.masterWalletId);
    const q = this.db('transfers')
      .where({ organizationId })
      .modify((b) => {
        if (args.status) b.where({ status: args.status });
        if (masterWalletId) b.where({ masterWalletId });
      });
    const { rows, total } = await fetchPage<Record<string, any>>(q, args, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return toPage(await this.views(rows), total, args);
  }

  async get(organizationId: string, id: string, trx: Knex | Knex.Transaction = this.db): Promise<TransferView> {
    id = Ids.uuid('Transfer', id);
    const row = await trx('transfers').where({ id, organizationId }).first();
    if (!row) throw KeelError.notFound('Transfer');
    return (await this.views([row], trx))[0];
  }

  /** Approves or rejects a transfer waiting for approval (requireApprovalForTransfers). */
  async decide(organizationId: string, id: string, approve: boolean): Promise<TransferView> {
    id = Ids.uuid('Transfer', id);
    return this.uow.run(approve ? 'transfer.approve' : 'transfer.reject', async (trx) => {
      const row = await trx('transfers').where({ id, organizationId }).forUpdate().first();
      if (!row) throw KeelError.notFound('Transfer');
      if (row.status !== 'PENDING_APPROVAL') throw new KeelError('CONFLICT', `The transfer is ${row.status}, not waiting for approval`);
      // The lists may have changed since the request: an approval is screened again.
      if (approve) checkSanctions(this.sanctions, await trx('transfer_items').where({ transferId: id }).orderBy('position').select('recipient'));
      if (approve) {
        await trx('transfers').where({ id }).update({ status: 'QUEUED', decidedAt: trx.fn.now(), updatedAt: trx.fn.now() });
        const items = await trx('transfer_items').where({ transferId: id }).update({ status: 'QUEUED', updatedAt: trx.fn.now() }).returning('id');
        await this.approved.run(trx, { kind: row.kind, itemIds: items.map((i: { id: string }) => i.id) });
      } else {
        await this.reject(trx, row);
      }
      return this.get(organizationId, id, trx);
    });
  }

  /**
   * Rejects a transfer held for approval (its row locked by the caller): its lines' reservations
   * are released and the rejection listeners told. A gas top-up held with it that paid only for
   * its lines is rejected too, so no gas money moves for a send that will not happen.
   */
  private async reject(trx: Knex.Transaction, row: { id: string; organizationId: string; kind: TransferKind; addressId: string | null; masterWalletId: string }): Promise<void> {
    await trx('transfers').where({ id: row.id }).update({ status: 'REJECTED', decidedAt: trx.fn.now(), updatedAt: trx.fn.now() });
    const items: { id: string; assetId: string; rawAmount: string }[] = await trx('transfer_items').where({ transferId: row.id }).update({ status: 'REJECTED', updatedAt: trx.fn.now() }).returning(['id', 'assetId', 'rawAmount']);
    const walletId = row.addressId ?? row.masterWalletId;
    await this.funds.release(trx, items.map((i) => ({ organizationId: row.organizationId, walletId, assetId: i.assetId, rawAmount: BigInt(i.rawAmount), itemId: i.id })));
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
    await this.rejected.run(trx, { kind: row.kind, itemIds: items.map((i) => i.id) });
    for (const topUp of heldTopUps) await this.reject(trx, topUp);
  }

  /** Resolves assets and amounts; every line must be on one chain the wallet is enabled on. */
  private async price(wallet: SendingWallet, input: TransferLine[]): Promise<{ network: ChainNetwork; lines: PricedLine[] }> {
    const assets = await this.chains.assetViews(input.filter((l) => Ids.isUuid(l.assetId)).map((l) => l.assetId.toLowerCase()));
    const lines = input.map((l, i): PricedLine => {
      const asset = assets.get(l.assetId.toLowerCase());
      if (!asset || !asset.isActive) throw KeelError.invalidField(`assets.${i}.assetId`, 'unknown asset');
      return { asset, recipient: checksummedAddress(l.recipient, `assets.${i}.recipient`), rawAmount: rawAmount(l.amount, asset.decimals, i) };
    });
    const blockchainId = lines[0].asset.blockchainId;
    if (lines.some((l) => l.asset.blockchainId !== blockchainId)) throw new KeelError('INVALID_NETWORK', 'Every line of a transfer must be on the same chain');
    const network = this.networks.get(blockchainId);
    if (!network || !wallet.blockchainIds.includes(blockchainId)) throw new KeelError('INVALID_NETWORK', 'The wallet is not enabled on the chain of these assets');
    return { network, lines };
  }

  /**
   * The chain balance must cover this transfer plus every line still on its way out from the same
   * address, and the native balance must leave room for gas.
   */
  async ensureFunds(wallet: SendingWallet, network: ChainNetwork, lines: PricedLine[]): Promise<void> {
    const byId = new Map(lines.map((l) => [l.asset.id, l.asset]));
    const ids = [...byId.keys()];
    const needed = await this.inFlightByAsset(this.db, wallet.address, network.blockchainId, ids);
    for (const l of lines) needed.set(l.asset.id, (needed.get(l.asset.id) ?? 0n) + l.rawAmount);
    const balances = await readBalances(network.provider, wallet.address, ids.map((id) => byId.get(id)!));
    ids.forEach((id, i) => {
      if (balances[i] < needed.get(id)!) {
        const asset = byId.get(id)!;
        throw new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} holds ${formatScaled(balances[i], asset.decimals)} ${asset.symbol}; this transfer and those in flight need ${formatScaled(needed.get(id)!, asset.decimals)}`, {
          assetId: id,
          available: formatScaled(balances[i], asset.decimals),
          required: formatScaled(needed.get(id)!, asset.decimals),
        });
      }
    });
    if (!wallet.configurations.enableGaslessWithdraw && (await network.provider.getBalance(wallet.address)) === 0n) {
      throw new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} holds no native coin to pay gas`);
    }
  }

  private async insert(trx: Knex.Transaction, wallet: SendingWallet, blockchainId: string, kind: TransferKind, status: string, lines: QueuedLine[], note: string | null): Promise<{ transferId: string; itemIds: string[] }> {
    const [transfer] = await trx('transfers')
      .insert({ organizationId: wallet.organizationId, masterWalletId: wallet.masterWalletId, addressId: wallet.addressId, blockchainId, fromAddress: wallet.address, kind, status, note })
      .returning('id');
    const transferId = (transfer as { id: string }).id;
    const items: { id: string }[] = await trx('transfer_items')
      .insert(
        lines.map((l, position) => ({
          transferId,
          position,
          assetId: l.asset.id,
          recipient: l.recipient,
          rawAmount: l.rawAmount.toString(),
          status,
          afterItemId: l.afterItemId ?? null,
          callTo: l.call?.to ?? null,
          callData: l.call?.data ?? null,
          callValue: l.call ? l.call.value.toString() : null,
        })),
      )
      .returning('id');
    // A line that moves nothing (a DEX approval) takes nothing from the ledger.
    await this.funds.reserve(
      trx,
      lines.map((l, i) => ({ organizationId: wallet.organizationId, walletId: wallet.addressId ?? wallet.masterWalletId, assetId: l.asset.id, rawAmount: l.rawAmount, itemId: items[i].id })).filter((l) => l.rawAmount > 0n),
    );
    return { transferId, itemIds: items.map((i) => i.id) };
  }

  private async views(rows: Record<string, any>[], trx: Knex | Knex.Transaction = this.db): Promise<TransferView[]> {
    if (!rows.length) return [];
    const items: Record<string, any>[] = await trx('transfer_items').whereIn('transferId', rows.map((r) => r.id)).orderBy(['transferId', 'position']);
    const assets = await this.chains.assetViews(items.map((i) => i.assetId), trx);
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      status: r.status,
      masterWalletId: r.masterWalletId,
      addressId: r.addressId,
      blockchainId: r.blockchainId,
      fromAddress: r.fromAddress,
      note: r.note,
      decidedAt: r.decidedAt,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      items: items.filter((i) => i.transferId === r.id).map((i) => itemView(i, assets.get(i.assetId)!)),
    }));
  }
}

function itemView(i: Record<string, any>, asset: AssetView): TransferItemView {
  return {
    id: i.id,
    position: i.position,
    asset,
    recipient: i.recipient,
    amount: formatScaled(BigInt(i.rawAmount), asset.decimals),
    rawAmount: String(i.rawAmount),
    status: i.status,
    txHash: i.txHash,
    replacedTxHashes: i.replacedTxHashes ?? [],
    nonce: i.nonce === null ? null : String(i.nonce),
    blockNumber: i.blockNumber === null ? null : String(i.blockNumber),
    gasFee: i.feePaid === null ? null : formatScaled(BigInt(i.feePaid), 18),
    error: i.error,
    submittedAt: i.submittedAt,
  };
}


function rawAmount(text: string, decimals: number, i: number): bigint {
  const raw = parseUnits(text, decimals);
  if (raw === null) throw KeelError.invalidField(`assets.${i}.amount`, `must be a positive decimal string with at most ${decimals} decimals`);
  if (raw <= 0n) throw KeelError.invalidField(`assets.${i}.amount`, 'must be above 0');
  return raw;
}
