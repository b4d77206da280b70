import { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import { KeelError } from '../../platform/errors';
import type { Outbox } from '../../platform/events/outbox';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { ChainService, type AssetView, type BlockchainModel, type BlockchainView } from '../chains';
import type { ChainNetworks } from '../chains';
import { applyConfigurations, assertSweepDestination, DEFAULT_CONFIGURATIONS, readConfigurations, type WalletConfigurations } from './wallet-configurations';
import { MasterWalletModel } from './wallet.model';
import { WalletKeys } from './wallet-keys';
import { walletBalances, walletFamily, type WalletFamily } from './wallet-families';
import { formatScaled } from '../../platform/decimal';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { WalletAmlView, WalletScreening } from './wallet-screening';
import type { SettlementContractCheck } from './settlement-contract-check';
import type { WalletDependents } from './wallet-dependents';
import { watchedChainIds } from './watched-wallets';

/** Open checkouts named in a refusal to stop watching them. */
const OPEN_CHECKOUTS_NAMED = 20;

export interface CreateMasterWallet {
  blockchainId: string;
  name: string;
  description?: string;
  metadata?: Record<string, unknown>;
  configurations?: Record<string, unknown>;
}

/** The stored configurations as the API shows them: aml is Keel's own screening of the wallet's deposits. */
export type MasterWalletConfigurations = Omit<WalletConfigurations, 'aml'> & { aml: WalletAmlView | undefined };

export interface MasterWalletAnalytics {
  addressesCount: number;
  autoSettlementRulesCount: number;
  paymentLinksCount: number;
}

/** Whether Keel watches the wallet and its addresses for deposits on one chain. */
export interface WalletMonitoring {
  blockchainId: string;
  enabled: boolean;
}

/** A master wallet as services and the API show it (never its keys). */
export interface MasterWalletView {
  id: string;
  name: string;
  description: string | null;
  /** Address 0 of the HD wallet; the same on every EVM chain. */
  walletAddress: string;
  network: string;
  /** The chain the wallet was created on. */
  blockchain: BlockchainView;
  blockchainId: string;
  configurations: MasterWalletConfigurations;
  metadata: Record<string, unknown>;
  analytics: MasterWalletAnalytics;
  isActive: boolean;
  enabledBlockchains: BlockchainView[];
  monitoring: WalletMonitoring[];
  createdAt: Date;
  updatedAt: Date;
}

export interface MasterWalletWithMessage {
  data: MasterWalletView;
  message: string;
}

/** The on-chain balance of one asset. */
export interface AssetBalanceView {
  asset: AssetView;
  blockchainId: string;
  /** In whole units, e.g. "12.5". */
  balance: string;
  /** In the smallest unit. */
  rawBalance: string;
}

export interface MasterWalletFilter {
  isActive?: boolean;
  blockchainId?: string;
}

export interface UpdateMasterWallet {
  name?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  configurations?: Record<string, unknown>;
  isActive?: boolean;
}

interface WalletChainRow {
  masterWalletId: string;
  blockchainId: string;
  monitoringEnabled: boolean;
}

export function walletNotFound(): KeelError {
  return new KeelError('WALLET_NOT_FOUND', 'Master wallet not found');
}

/** A master wallet id from a caller: anything but a UUID cannot name one, so it is WALLET_NOT_FOUND. */
export function parseMasterWalletId(id: string): string {
  if (!Ids.isUuid(id)) throw walletNotFound();
  return id.toLowerCase();
}

/** Master wallets: HD wallets whose keys Keel holds, on one chain or (multi-chain) every EVM chain. */
export class MasterWalletService {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly keys: WalletKeys,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    private readonly uow: UnitOfWork,
    private readonly aml: WalletScreening,
    private readonly dependents: WalletDependents,
    private readonly settlementContracts: SettlementContractCheck,
  ) {}

  async create(organizationId: string, input: CreateMasterWallet): Promise<MasterWalletView> {
    const chain = await this.activeChain(input.blockchainId, 'blockchainId');
    const configurations = applyConfigurations(DEFAULT_CONFIGURATIONS, input.configurations);
    const id = randomUUID();
    const keys = await walletFamily(chain.family, this.keys).newKeys(id);
    assertSweepDestination(configurations, keys.walletAddress);
    this.aml.assertConfigurations(configurations);
    const wallet = await this.uow.run('master-wallet.create', async (trx) => {
      const row = await MasterWalletModel.query(trx).insertAndFetch({
        id,
        organizationId,
        blockchainId: chain.id,
        name: input.name,
        description: input.description ?? null,
        walletAddress: keys.walletAddress,
        sealedMnemonic: keys.sealedMnemonic,
        accountXpub: keys.accountXpub,
        configurations,
        metadata: input.metadata ?? {},
      } as Partial<MasterWalletModel>);
      await this.syncChains(trx, row);
      await this.assertSweepsPaySomeone(trx, row);
      const view = await this.view(row, trx);
      await this.outbox.publish(trx, { organizationId, type: 'master.created', data: walletEventData(view) });
      return view;
    });
    return wallet;
  }

  async list(organizationId: string, args: PageWindow & MasterWalletFilter): Promise<PageResult<MasterWalletView>> {
    args = { ...args, blockchainId: Ids.filter('blockchainId', args.blockchainId) };
    const q = MasterWalletModel.query(this.db)
      .where({ organizationId })
      .modify((b) => {
        if (args.isActive !== undefined) b.where('isActive', args.isActive);
        if (args.blockchainId) b.whereExists(this.db('master_wallet_chains').whereRaw('master_wallet_id = master_wallets.id').where('blockchain_id', args.blockchainId));
      });
    const { rows, total } = await fetchPage<MasterWalletModel>(q, args, [{ column: 'createdAt', order: 'desc' }, { column: 'id' }]);
    return toPage(await this.views(rows), total, args);
  }

  async get(organizationId: string, id: string): Promise<MasterWalletView> {
    return this.view(await this.row(organizationId, id));
  }

  /** Views of several of the organisation's wallets in one pass, by id (a page of another module's rows that name them). */
  async getMany(organizationId: string, ids: string[]): Promise<Map<string, MasterWalletView>> {
    const rows = ids.length ? await MasterWalletModel.query(this.db).where({ organizationId }).whereIn('id', [...new Set(ids)]) : [];
    return new Map((await this.views(rows)).map((v) => [v.id, v]));
  }

  /** The wallet row, or WALLET_NOT_FOUND (404) when it is unknown or another organisation's. */
  async row(organizationId: string, id: string, trx: Knex | Knex.Transaction = this.db): Promise<MasterWalletModel> {
    const row = await MasterWalletModel.query(trx).findOne({ id: parseMasterWalletId(id), organizationId });
    if (!row) throw walletNotFound();
    return row;
  }

  async update(organizationId: string, id: string, input: UpdateMasterWallet): Promise<MasterWalletView> {
    id = parseMasterWalletId(id);
    return this.uow.run('master-wallet.update', async (trx) => {
      const current = await MasterWalletModel.query(trx).findOne({ id, organizationId }).forUpdate();
      if (!current) throw walletNotFound();
      const patch: Partial<MasterWalletModel> = { updatedAt: new Date() };
      if (input.name !== undefined) patch.name = input.name;
      if (input.description !== undefined) patch.description = input.description;
      if (input.metadata !== undefined) patch.metadata = input.metadata;
      if (input.isActive !== undefined) patch.isActive = input.isActive;
      if (input.isActive === false && current.isActive) await this.assertNoOpenCheckouts(trx, id, await this.enabledChainIds(id, trx), 'The wallet cannot be deactivated');
      if (input.configurations !== undefined) {
        patch.configurations = applyConfigurations(readConfigurations(current.configurations), input.configurations);
        assertSweepDestination(patch.configurations, current.walletAddress);
        this.aml.assertConfigurations(patch.configurations);
      }
      const row = await MasterWalletModel.query(trx).patchAndFetchById(id, patch);
      if (input.configurations !== undefined) {
        await this.syncChains(trx, row);
        await this.assertSweepsPaySomeone(trx, row);
      }
      const view = await this.view(row, trx);
      await this.outbox.publish(trx, { organizationId, type: 'master.updated', data: walletEventData(view) });
      return view;
    });
  }

  /** Turns deposit watching on a chain on or off; MONITORING_FAILED where it cannot be turned on. */
  async setMonitoring(organizationId: string, id: string, blockchainId: string, enabled: boolean): Promise<MasterWalletWithMessage> {
    id = parseMasterWalletId(id);
    const chain = await this.chains.blockchainRow(blockchainId);
    return this.uow.run('master-wallet.monitoring', async (trx) => {
      const wallet = await MasterWalletModel.query(trx).findOne({ id, organizationId }).forUpdate();
      if (!wallet) throw walletNotFound();
      const updated = await trx('master_wallet_chains').where({ master_wallet_id: id, blockchain_id: chain.id }).update({ monitoring_enabled: enabled });
      if (enabled) {
        if (!updated) throw new KeelError('MONITORING_FAILED', `The wallet is not enabled on ${chain.name}; create it there or turn on configurations.enableMultiChain`);
        if (!chain.isActive) throw new KeelError('MONITORING_FAILED', `${chain.name} is not active`);
        if (!wallet.isActive) throw new KeelError('MONITORING_FAILED', 'The wallet is deactivated');
        if (!this.networks.family(chain.id)) throw new KeelError('MONITORING_FAILED', `${chain.name} has no reachable node in this deployment`);
      } else if (!updated) {
        throw new KeelError('MONITORING_FAILED', `The wallet is not enabled on ${chain.name}`);
      } else {
        await this.assertNoOpenCheckouts(trx, id, [chain.id], `Monitoring cannot be turned off on ${chain.name}`);
      }
      const row = await MasterWalletModel.query(trx).patchAndFetchById(id, { updatedAt: new Date() });
      const view = await this.view(row, trx);
      await this.outbox.publish(trx, { organizationId, type: 'master.updated', data: walletEventData(view) });
      return { data: view, message: `Monitoring ${enabled ? 'enabled' : 'disabled'} on ${chain.name}` };
    });
  }

  /** Balances read from the chains, per asset, for the wallet's own address. */
  async balances(organizationId: string, id: string, blockchainId?: string): Promise<AssetBalanceView[]> {
    id = parseMasterWalletId(id);
    blockchainId = Ids.filter('blockchainId', blockchainId);
    const wallet = await this.row(organizationId, id);
    const chainIds = (await this.walletChains([id])).filter((c) => !blockchainId || c.blockchainId === blockchainId).map((c) => c.blockchainId);
    if (blockchainId && !chainIds.length) throw new KeelError('INVALID_NETWORK', 'The wallet is not enabled on that blockchain');
    const out: AssetBalanceView[] = [];
    for (const chainId of chainIds) {
      const assets = await this.chains.assetsOf(chainId);
      const raw = await walletBalances(this.networks, chainId, wallet.walletAddress, assets);
      if (!raw) continue;
      const views = await this.chains.withChains(assets);
      assets.forEach((a, i) => out.push({ asset: views[i], blockchainId: chainId, rawBalance: raw[i].toString(), balance: formatScaled(raw[i], a.decimals) }));
    }
    return out;
  }

  /** A chain that exists and is active: an EVM chain, or a Solana cluster this deployment serves. */
  async activeChain(blockchainId: string, field: string): Promise<BlockchainModel> {
    const chain = await this.chains.findBlockchain(blockchainId);
    if (!chain) throw KeelError.invalidField(field, 'unknown blockchain');
    if (!chain.isActive || (chain.family === 'solana' && !this.networks.solana(chain.id))) throw new KeelError('INVALID_NETWORK', `${chain.name} is not available for wallets`);
    return chain;
  }

  /** The keys and addresses of the family of a wallet's chain (wallet-families.ts). */
  async familyOf(blockchainId: string, db: Knex | Knex.Transaction = this.db): Promise<WalletFamily> {
    const chain = await this.chains.findBlockchain(blockchainId, db);
    return walletFamily(chain?.family ?? 'evm', this.keys);
  }

  /** enabledBlockchains: the wallet's own chain, plus (an EVM wallet) every active EVM chain with enableMultiChain. */
  private async syncChains(trx: Knex.Transaction, wallet: MasterWalletModel): Promise<void> {
    const multi = readConfigurations(wallet.configurations).enableMultiChain;
    const family = await this.familyOf(wallet.blockchainId, trx);
    const wanted = await family.enabledChains(wallet.blockchainId, multi, () => this.chains.activeEvmChainIds(trx));
    const dropped = (await this.enabledChainIds(wallet.id, trx)).filter((c) => !wanted.includes(c));
    await this.assertNoOpenCheckouts(trx, wallet.id, dropped, 'The wallet cannot leave a chain (enableMultiChain)');
    await trx('master_wallet_chains').where({ master_wallet_id: wallet.id }).whereNotIn('blockchain_id', wanted).delete();
    await trx('master_wallet_chains')
      .insert(wanted.map((blockchainId) => ({ master_wallet_id: wallet.id, blockchain_id: blockchainId })))
      .onConflict(['master_wallet_id', 'blockchain_id'])
      .ignore();
  }

  /**
   * 422 VALIDATION_ERROR naming configurations.autoSweep.destinationAddress when it is Keel's
   * settlement contract on a chain the wallet is enabled on (as just synced), so on a chain where its
   * deposits would be swept there. The sweep checks again when it runs (a contract deployed later).
   */
  private async assertSweepsPaySomeone(trx: Knex.Transaction, wallet: MasterWalletModel): Promise<void> {
    const destination = readConfigurations(wallet.configurations).autoSweep.destinationAddress;
    if (!destination) return;
    for (const blockchainId of await this.enabledChainIds(wallet.id, trx)) await this.settlementContracts.check(blockchainId, destination, 'configurations.autoSweep.destinationAddress');
  }

  /** The chains Keel records the wallet's deposits on now (enabled, monitoring on, the wallet active): where a checkout may be opened. */
  async watchedChainIds(walletId: string): Promise<string[]> {
    return watchedChainIds(this.db, walletId);
  }

  /** The same in a transaction that opens a checkout, held true until it commits (watched-wallets.ts). */
  async heldWatchedChainIds(trx: Knex.Transaction, walletId: string): Promise<string[]> {
    return watchedChainIds(trx, walletId, true);
  }

  /**
   * Keel keeps watching a wallet on a chain while any checkout there is open (its address not yet
   * retired: until its expiry plus the late-payment grace, its payments confirmed and swept), so a
   * payer who was shown an address is always recorded and credited: turning monitoring off,
   * dropping the chain or deactivating the wallet before then is 409 CONFLICT naming those checkouts.
   */
  private async assertNoOpenCheckouts(trx: Knex.Transaction, walletId: string, blockchainIds: string[], refused: string): Promise<void> {
    // Only chains this deployment serves: no payment can be recorded on another (its checkouts are never retired either).
    const served = blockchainIds.filter((id) => this.networks.port(id) !== undefined);
    if (!served.length) return;
    const { checkouts, total } = await this.dependents.openCheckouts(trx, walletId, served, OPEN_CHECKOUTS_NAMED);
    if (!total) return;
    throw new KeelError('CONFLICT', `${refused} while ${total} of its checkouts there are open (payment link sessions or payment intents whose addresses are still watched); deactivate the links or cancel the intents, and try again once they have ended`, { openCheckouts: checkouts, total });
  }

  /** The chains a master wallet is enabled on, in the order they were enabled. */
  async enabledChainIds(walletId: string, db: Knex | Knex.Transaction = this.db): Promise<string[]> {
    return (await this.walletChains([walletId], db)).map((c) => c.blockchainId);
  }

  private async walletChains(ids: string[], trx: Knex | Knex.Transaction = this.db): Promise<WalletChainRow[]> {
    return trx('master_wallet_chains').whereIn('master_wallet_id', ids).orderBy('created_at').select('master_wallet_id', 'blockchain_id', 'monitoring_enabled');
  }

  private async view(row: MasterWalletModel, trx: Knex | Knex.Transaction = this.db): Promise<MasterWalletView> {
    return (await this.views([row], trx))[0];
  }

  private async views(rows: MasterWalletModel[], trx: Knex | Knex.Transaction = this.db): Promise<MasterWalletView[]> {
    if (!rows.length) return [];
    const ids = rows.map((r) => r.id);
    // One after another: inside a transaction they share one connection anyway (pg warns on overlap).
    const links = await this.walletChains(ids, trx);
    const counts = await trx('addresses').whereIn('master_wallet_id', ids).groupBy('master_wallet_id').select('master_wallet_id').count<{ masterWalletId: string; count: string }[]>('* as count');
    const aml = await this.aml.statuses(trx, ids);
    // Payment links (not deleted) that settle into the wallet.
    const paymentLinkCounts = await this.dependents.paymentLinks(trx, ids);
    // Active settlement rules of the wallet and of its deposit addresses.
    const settlementRuleCounts = await this.dependents.settlementRules(trx, ids);
    const chains = await this.chains.blockchainViews([...links.map((l) => l.blockchainId), ...rows.map((r) => r.blockchainId)], trx);
    const addressCounts = new Map(counts.map((c) => [c.masterWalletId, Number(c.count)]));
    return rows.map((r) => {
      const own = links.filter((l) => l.masterWalletId === r.id);
      const chain = chains.get(r.blockchainId) as BlockchainView;
      return {
        id: r.id,
        name: r.name,
        description: r.description,
        walletAddress: r.walletAddress,
        network: chain.network,
        blockchain: chain,
        blockchainId: r.blockchainId,
        // configurations.aml is Keel's own screening of the wallet's deposits, whatever was stored.
        configurations: { ...readConfigurations(r.configurations), aml: aml.get(r.id) },
        metadata: r.metadata,
        analytics: { addressesCount: addressCounts.get(r.id) ?? 0, autoSettlementRulesCount: settlementRuleCounts.get(r.id) ?? 0, paymentLinksCount: paymentLinkCounts.get(r.id) ?? 0 },
        isActive: r.isActive,
        enabledBlockchains: own.map((l) => chains.get(l.blockchainId) as BlockchainView),
        monitoring: own.map((l) => ({ blockchainId: l.blockchainId, enabled: l.monitoringEnabled })),
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
      };
    });
  }
}

/** master.* event data: the wallet as the API shows it, without analytics. */
export function walletEventData(w: MasterWalletView): Record<string, unknown> {
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    walletAddress: w.walletAddress,
    network: w.network,
    blockchain: { id: w.blockchain.id, name: w.blockchain.name, slug: w.blockchain.slug },
    enabledBlockchains: w.enabledBlockchains.map((b) => ({ id: b.id, name: b.name, slug: b.slug })),
    configurations: w.configurations,
    metadata: w.metadata,
    isActive: w.isActive,
  };
}
