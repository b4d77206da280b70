import { Knex } from 'knex';
import { isNftStandard } from '../chains';
import { chainTransferColumn } from '../deposits';
import { KeelError } from '../../platform/errors';
import { formatScaled, normalizeDecimal, parseDecimal } from '../../platform/decimal';
import { Ids } from '../../platform/ids';
import { toPage, PageResult, PageWindow } from '../../platform/paging';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { Outbox } from '../../platform/events/outbox';
import type { ChainNetworks, ChainService } from '../chains';
import { SendingWallet, SendingWallets, walletSourceOf } from '../wallets';
import type { AddressService, MasterWalletService } from '../wallets';
import { parseOrder, parseSlippage, DEFAULT_SLIPPAGE } from '../swaps';
import { checksummedAddress } from '../withdrawals';
import type { SettlementContractGuard } from '../withdrawals';

/** What a rule matches: deposits on one chain, of some assets (all when empty), within amount bounds (whole units). */
export interface SettlementSource {
  blockchainId: string;
  assetIds?: string[] | null;
  minAmount?: string | null;
  maxAmount?: string | null;
}

/** Where matching deposits go: an address on the same chain, in an asset (a swap when it differs from the deposit's). */
export interface SettlementDestination {
  blockchainId: string;
  assetId: string;
  address: string;
}

export interface SettlementRuleInput {
  /** Exactly one of masterWalletId (deposits to the master wallet's own address) and addressId (a deposit address). */
  masterWalletId?: string | null;
  addressId?: string | null;
  name: string;
  description?: string | null;
  order?: string | null;
  slippageTolerance?: string | null;
  isActive?: boolean | null;
  source: SettlementSource;
  destination: SettlementDestination;
  /** Seconds to wait after a deposit is confirmed before executing. */
  delay?: number | null;
}

export interface SettlementRulePatch {
  name?: string | null;
  description?: string | null;
  order?: string | null;
  slippageTolerance?: string | null;
  isActive?: boolean | null;
  source?: SettlementSource | null;
  destination?: SettlementDestination | null;
  delay?: number | null;
}

/** As the spec types it: minAmount and maxAmount are strings, "0" and "" (unbounded) when the rule sets none. */
export interface SettlementSourceView {
  blockchainId: string;
  assetIds: string[];
  minAmount: string;
  maxAmount: string;
}

export interface SettlementRuleView {
  id: string;
  name: string;
  description: string;
  /** The master wallet id, or the deposit address id for an address rule. */
  walletId: string;
  walletType: string;
  masterWalletId: string;
  addressId: string | null;
  order: string;
  slippageTolerance: string;
  isActive: boolean;
  source: SettlementSourceView;
  destination: SettlementDestination;
  delay: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface SettlementExecutionView {
  id: string;
  ruleId: string;
  depositId: string;
  depositTxHash: string;
  asset: { id: string; symbol: string };
  amount: string;
  kind: string | null;
  status: string;
  attempts: number;
  nextAttemptAt: Date | null;
  transferId: string | null;
  swapId: string | null;
  txHash: string | null;
  error: string | null;
  depositRevertedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface SettlementRuleFilter extends PageWindow {
  masterWalletId?: string | null;
  addressId?: string | null;
  isActive?: boolean | null;
}

/**
 * Settlement rules of master wallets (deposits to the wallet's own address) and of deposit
 * addresses: what deposits they match and where the funds go. Execution is the trigger's and the
 * worker's (settlement-trigger.ts, settlement-rule-worker.ts); deleted rules are kept, marked, so
 * their executions stay readable.
 */
export class SettlementRuleService {
  constructor(
    private readonly db: Knex,
    private readonly wallets: SendingWallets,
    private readonly masterWallets: MasterWalletService,
    private readonly addresses: AddressService,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    private readonly settlementContracts: SettlementContractGuard,
    private readonly outbox: Outbox,
    private readonly uow: UnitOfWork,
  ) {}

  async create(organizationId: string, input: SettlementRuleInput): Promise<SettlementRuleView> {
    const check = async () => {
      const wallet = await this.wallets.resolve(organizationId, walletSourceOf(input));
      return { wallet, fields: await this.checked(wallet, input) };
    };
    return this.uow.runChecked('settlement_rule.create', check, async (trx, { wallet, fields }) => {
      const [row] = await trx('settlement_rules')
        .insert({ organizationId, masterWalletId: wallet.masterWalletId, addressId: wallet.addressId, name: input.name, description: input.description ?? '', isActive: input.isActive ?? true, ...fields })
        .returning('*');
      const view = ruleView(row);
      await this.publish(trx, organizationId, view, 'created');
      return view;
    });
  }

  async update(organizationId: string, id: string, patch: SettlementRulePatch): Promise<SettlementRuleView> {
    const check = async () => {
      const current = await this.row(organizationId, id);
      const wallet = await this.wallets.resolve(organizationId, current.addressId ? { addressId: current.addressId } : { masterWalletId: current.masterWalletId });
      const was = ruleView(current);
      const fields = await this.checked(wallet, {
        name: patch.name ?? was.name,
        order: patch.order ?? was.order,
        slippageTolerance: patch.slippageTolerance ?? was.slippageTolerance,
        source: patch.source ?? was.source,
        destination: patch.destination ?? was.destination,
        delay: patch.delay ?? was.delay,
      });
      return { current, fields };
    };
    return this.uow.runChecked('settlement_rule.update', check, async (trx, { current, fields }) => {
      const changes: Record<string, unknown> = { ...fields, updatedAt: trx.fn.now() };
      if (patch.name !== undefined && patch.name !== null) changes.name = patch.name;
      if (patch.description !== undefined && patch.description !== null) changes.description = patch.description;
      if (patch.isActive !== undefined && patch.isActive !== null) changes.isActive = patch.isActive;
      const [row] = await trx('settlement_rules').where({ id: current.id, organizationId }).whereNull('deletedAt').update(changes).returning('*');
      if (!row) throw KeelError.notFound('Settlement rule');
      const view = ruleView(row);
      await this.publish(trx, organizationId, view, 'updated');
      return view;
    });
  }

  /**
   * Turns a rule on or off and nothing else: no re-validation, so a rule whose destination the
   * wallet's policy no longer allows can always be switched off (such a rule fails at execution).
   */
  async setActive(organizationId: string, id: string, isActive: boolean): Promise<SettlementRuleView> {
    id = Ids.uuid('Settlement rule', id);
    return this.uow.run(isActive ? 'settlement_rule.activate' : 'settlement_rule.deactivate', async (trx) => {
      const [row] = await trx('settlement_rules').where({ id, organizationId }).whereNull('deletedAt').update({ isActive, updatedAt: trx.fn.now() }).returning('*');
      if (!row) throw KeelError.notFound('Settlement rule');
      const view = ruleView(row);
      await this.publish(trx, organizationId, view, 'updated');
      return view;
    });
  }

  /** Deletes a rule: it matches nothing from now on and its pending executions are cancelled. */
  async delete(organizationId: string, id: string): Promise<{ data: SettlementRuleView; message: string }> {
    const current = await this.row(organizationId, id);
    return this.uow.run('settlement_rule.delete', async (trx) => {
      const [row] = await trx('settlement_rules').where({ id: current.id, organizationId }).whereNull('deletedAt').update({ deletedAt: trx.fn.now(), isActive: false, updatedAt: trx.fn.now() }).returning('*');
      if (!row) throw KeelError.notFound('Settlement rule');
      await trx('settlement_rule_executions').where({ ruleId: row.id, status: 'PENDING' }).update({ status: 'CANCELLED', error: 'the rule was deleted before it executed', updatedAt: trx.fn.now() });
      const view = ruleView(row);
      await this.publish(trx, organizationId, view, 'deleted');
      return { data: view, message: 'Settlement rule deleted' };
    });
  }

  async get(organizationId: string, id: string): Promise<SettlementRuleView> {
    return ruleView(await this.row(organizationId, id));
  }

  async list(organizationId: string, args: SettlementRuleFilter): Promise<PageResult<SettlementRuleView>> {
    const masterWalletId = Ids.filter('masterWalletId', args.masterWalletId);
    const addressId = Ids.filter('addressId', args.addressId);
    const q = this.db('settlement_rules')
      .where({ organizationId })
      .whereNull('deletedAt')
      .modify((b) => {
        if (masterWalletId) b.where({ masterWalletId }).whereNull('addressId');
        if (addressId) b.where({ addressId });
        if (args.isActive !== undefined && args.isActive !== null) b.where({ isActive: args.isActive });
      });
    const { rows, total } = await fetchPage<Record<string, any>>(q, args, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return toPage(rows.map(ruleView), total, args);
  }

  /** The rules of a master wallet (deposits to its own address), active or not; 404 for a wallet not the caller's. */
  async listOfMasterWallet(organizationId: string, masterWalletId: string, args: PageWindow): Promise<PageResult<SettlementRuleView>> {
    const wallet = await this.masterWallets.row(organizationId, masterWalletId);
    return this.list(organizationId, { ...args, masterWalletId: wallet.id });
  }

  /** The rules of a deposit address, deactivated or not; 404 for an address not the caller's. */
  async listOfAddress(organizationId: string, addressId: string, args: PageWindow): Promise<PageResult<SettlementRuleView>> {
    const address = await this.addresses.row(organizationId, addressId);
    return this.list(organizationId, { ...args, addressId: address.id });
  }

  /** A rule's executions, newest first: one per deposit it matched. */
  async executions(organizationId: string, ruleId: string, args: PageWindow): Promise<PageResult<SettlementExecutionView>> {
    const rule = await this.row(organizationId, ruleId, true);
    const { rows, total } = await fetchPage<Record<string, any>>(this.db('settlement_rule_executions').where({ ruleId: rule.id }), args, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    const depositTxHashes = await chainTransferColumn(this.db, rows.map((r) => r.chainTransferId), 'txHash');
    const assets = await this.chains.assetViews(rows.map((r) => r.assetId));
    return toPage(
      rows.map((r) => {
        const asset = assets.get(r.assetId)!;
        return {
          id: r.id,
          ruleId: r.ruleId,
          depositId: r.chainTransferId,
          depositTxHash: depositTxHashes.get(r.chainTransferId) as string,
          asset: { id: asset.id, symbol: asset.symbol },
          amount: formatScaled(BigInt(r.rawAmount), asset.decimals),
          kind: r.kind,
          status: r.status,
          attempts: r.attempts,
          nextAttemptAt: r.status === 'PENDING' ? r.runAfter : null,
          transferId: r.transferId,
          swapId: r.swapId,
          txHash: r.txHash,
          error: r.error,
          depositRevertedAt: r.depositRevertedAt,
          createdAt: r.createdAt,
          updatedAt: r.updatedAt,
        };
      }),
      total,
      args,
    );
  }

  private async row(organizationId: string, id: string, withDeleted = false): Promise<Record<string, any>> {
    id = Ids.uuid('Settlement rule', id);
    const row = await this.db('settlement_rules')
      .where({ id, organizationId })
      .modify((q) => (withDeleted ? q : q.whereNull('deletedAt')))
      .first();
    if (!row) throw KeelError.notFound('Settlement rule');
    return row;
  }

  /** The rule's fields checked against the wallet and the chains: the columns to store. */
  private async checked(wallet: SendingWallet, input: Omit<SettlementRuleInput, 'description' | 'isActive' | 'masterWalletId' | 'addressId'>): Promise<Record<string, unknown>> {
    const { source, destination } = input;
    const sourceChain = Ids.filter('source.blockchainId', source.blockchainId)!;
    const destinationChain = Ids.filter('destination.blockchainId', destination.blockchainId)!;
    // The one branch on the family here: a rule that converts swaps through an EVM DEX, so rules are EVM-only (issue 35).
    this.networks.refuseOnSolana(sourceChain, 'settlementRules', 'source.blockchainId');
    if (!wallet.blockchainIds.includes(sourceChain)) throw new KeelError('INVALID_NETWORK', 'source.blockchainId: the wallet is not enabled on this chain', { fields: [{ field: 'source.blockchainId', error: 'INVALID_FIELD' }] });
    if (destinationChain !== sourceChain) throw new KeelError('INVALID_NETWORK', 'destination.blockchainId must be the source chain: Keel settles on the chain the funds arrive on', { fields: [{ field: 'destination.blockchainId', error: 'INVALID_FIELD' }] });
    const sourceAssetIds = (source.assetIds ?? []).map((id, i) => Ids.filter(`source.assetIds.${i}`, id)!);
    const destinationAssetId = Ids.filter('destination.assetId', destination.assetId)!;
    const assets = await this.chains.assetViews([...sourceAssetIds, destinationAssetId]);
    sourceAssetIds.forEach((id, i) => {
      if (assets.get(id)?.blockchainId !== sourceChain) throw KeelError.invalidField(`source.assetIds.${i}`, 'not an asset of source.blockchainId');
      if (isNftStandard(assets.get(id)!.standard)) throw KeelError.invalidField(`source.assetIds.${i}`, 'an NFT collection is not settled by rules');
    });
    if (assets.get(destinationAssetId)?.blockchainId !== destinationChain) throw KeelError.invalidField('destination.assetId', 'not an asset of destination.blockchainId');
    if (isNftStandard(assets.get(destinationAssetId)!.standard)) throw KeelError.invalidField('destination.assetId', 'an NFT collection is not settled by rules');
    const swaps = sourceAssetIds.length === 0 || sourceAssetIds.some((id) => id !== destinationAssetId);
    if (swaps && !this.networks.get(sourceChain)?.spec.dex) throw new KeelError('INVALID_NETWORK', 'The chain has no DEX configured, so a rule must settle in the asset it receives', { fields: [{ field: 'destination.assetId', error: 'INVALID_FIELD' }] });
    const address = checksummedAddress(destination.address, 'destination.address');
    await this.settlementContracts.check(destinationChain, address, 'destination.address');
    const allowed = wallet.configurations.security.allowedRecipients.map((a) => a.toLowerCase());
    if (allowed.length && !allowed.includes(address.toLowerCase())) {
      throw new KeelError('FORBIDDEN', "destination.address is not in the wallet's security.allowedRecipients", { fields: [{ field: 'destination.address', error: 'INVALID_FIELD' }] });
    }
    const minAmount = amount(source.minAmount, 'source.minAmount');
    const maxAmount = amount(source.maxAmount, 'source.maxAmount');
    if (minAmount !== null && maxAmount !== null && compare(minAmount, maxAmount) > 0) throw KeelError.invalidField('source.maxAmount', 'must be at least source.minAmount');
    const delay = input.delay ?? 0;
    if (!Number.isInteger(delay) || delay < 0 || delay > 86_400 * 30) throw KeelError.invalidField('delay', 'must be whole seconds from 0 to 2592000 (30 days)');
    const order = parseOrder(input.order ?? 'FASTEST');
    return {
      name: input.name,
      orderType: order,
      slippageTolerance: formatScaled(order === 'NO_SLIPPAGE' ? 0n : parseSlippage(input.slippageTolerance ?? DEFAULT_SLIPPAGE), 2),
      sourceBlockchainId: sourceChain,
      sourceAssetIds,
      minAmount,
      maxAmount,
      destinationBlockchainId: destinationChain,
      destinationAssetId,
      destinationAddress: address,
      delaySeconds: delay,
    };
  }

  private async publish(trx: Knex.Transaction, organizationId: string, view: SettlementRuleView, action: 'created' | 'updated' | 'deleted'): Promise<void> {
    await this.outbox.publish(trx, { organizationId, type: `${ruleEventPrefix(view.addressId)}.${action}`, data: { ruleId: view.id, ...view } });
  }
}

export const ruleEventPrefix = (addressId: string | null) => (addressId ? 'address_settlement_rule' : 'master_settlement_rule');

export function ruleView(r: Record<string, any>): SettlementRuleView {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    walletId: r.addressId ?? r.masterWalletId,
    walletType: r.addressId ? 'ADDRESS' : 'MASTER',
    masterWalletId: r.masterWalletId,
    addressId: r.addressId,
    order: r.orderType,
    slippageTolerance: normalizeDecimal(String(r.slippageTolerance)),
    isActive: r.isActive,
    source: {
      blockchainId: r.sourceBlockchainId,
      assetIds: r.sourceAssetIds ?? [],
      minAmount: r.minAmount === null ? '0' : normalizeDecimal(String(r.minAmount)),
      maxAmount: r.maxAmount === null ? '' : normalizeDecimal(String(r.maxAmount)),
    },
    destination: { blockchainId: r.destinationBlockchainId, assetId: r.destinationAssetId, address: r.destinationAddress },
    delay: r.delaySeconds,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}


function amount(text: string | null | undefined, field: string): string | null {
  if (text === undefined || text === null || text === '') return null;
  const parsed = parseDecimal(text);
  if (!parsed || text.startsWith('-')) throw KeelError.invalidField(field, 'must be a non-negative decimal string such as "100.5"');
  return normalizeDecimal(text);
}

function compare(a: string, b: string): number {
  const [x, y] = [parseDecimal(a)!, parseDecimal(b)!];
  const scale = Math.max(x.scale, y.scale);
  const [xi, yi] = [x.int * 10n ** BigInt(scale - x.scale), y.int * 10n ** BigInt(scale - y.scale)];
  return xi === yi ? 0 : xi > yi ? 1 : -1;
}
