import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { blockchainView, refuseUnlessEvm, type BlockchainView } from '../chains';
import type { AddressService, MasterWalletService, MasterWalletView, AddressModel, WalletAmlView, WalletScreening } from '../wallets';
import { activeWalletOnChain, readConfigurations } from '../wallets';
import type { AgentCaller, AgentService } from './agent.service';

export interface CreateAgentWallet {
  blockchainId: string;
  /** The master wallet to derive the address under; default: the organisation's oldest active one enabled on the chain. */
  masterWalletId?: string;
  label?: string;
}

/** The agent wallet's address as the spec shows it (addressWallet). */
export interface AgentAddressWalletView {
  id: string;
  name: string | null;
  description: string | null;
  walletAddress: string;
  network: string;
  masterWalletId: string;
  blockchain: BlockchainView;
  metadata: Record<string, unknown>;
  isActive: boolean;
  enabledBlockchains: BlockchainView[];
  configurations: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface AgentWalletView {
  id: string;
  agentId: string;
  organizationId: string;
  addressId: string;
  blockchainId: string;
  label: string | null;
  isActive: boolean;
  addressWallet: AgentAddressWalletView;
  createdAt: Date;
  updatedAt: Date;
}

/** What a payment needs of the wallet it is sent from. */
export interface AgentWalletRow {
  id: string;
  organizationId: string;
  agentId: string;
  addressId: string;
  blockchainId: string;
  label: string | null;
  isActive: boolean;
  createdAt: Date;
  updatedAt: Date;
}

const WALLET = 'Agent wallet';

/** Agent wallets: deposit addresses of the organisation's master wallets, linked to an agent. */
export class AgentWalletService {
  constructor(
    private readonly db: Knex,
    private readonly agents: AgentService,
    private readonly masterWallets: MasterWalletService,
    private readonly addresses: AddressService,
    private readonly aml: WalletScreening,
    private readonly uow: UnitOfWork,
  ) {}

  /** Derives a new address under a master wallet enabled on the chain and links it to the agent (admin only). */
  async create(organizationId: string, agentId: string, input: CreateAgentWallet): Promise<AgentWalletView> {
    const caller = { organizationId, agentId: null };
    await this.agents.row(this.db, caller, agentId);
    const chain = await this.masterWallets.activeChain(input.blockchainId, 'blockchainId');
    // The one branch on the family here: agents sign EVM payments (EIP-712), EVM-only (issue 35).
    refuseUnlessEvm(chain, 'agentWallets', 'blockchainId');
    const masterWalletId = await this.masterWalletFor(organizationId, chain.id, input.masterWalletId);
    const id = await this.uow.run('agent.wallet-create', async (trx) => {
      const agent = await this.agents.row(trx, caller, agentId, true);
      const address = await this.addresses.createIn(trx, organizationId, masterWalletId, { name: input.label ?? `agent ${agent.name}`, metadata: { agentId: agent.id } });
      const [row] = await trx('agent_wallets').insert({ organizationId, agentId: agent.id, addressId: address.id, blockchainId: chain.id, label: input.label ?? null }).returning('id');
      await this.agents.publish(trx, 'agent.wallet_created', agent, { agentWalletId: row.id, addressId: address.id, walletAddress: address.address, masterWalletId, blockchainId: chain.id });
      return row.id as string;
    });
    return this.get({ organizationId, agentId: null }, agentId, id);
  }

  async list(caller: AgentCaller, agentId: string, page: PageWindow): Promise<PageResult<AgentWalletView>> {
    const agent = await this.agents.row(this.db, caller, agentId);
    const q = this.db('agent_wallets').where({ organizationId: caller.organizationId, agentId: agent.id });
    const { rows, total } = await fetchPage<AgentWalletRow>(q, page, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return toPage(await this.views(rows), total, page);
  }

  async get(caller: AgentCaller, agentId: string, id: string): Promise<AgentWalletView> {
    return (await this.views([await this.row(this.db, caller, agentId, id)]))[0];
  }

  /** The agent's wallet as the caller may see it; 404 otherwise. */
  async row(db: Knex | Knex.Transaction, caller: AgentCaller, agentId: string, id: string): Promise<AgentWalletRow> {
    const agent = await this.agents.row(db, caller, agentId);
    const row = await db('agent_wallets').where({ id: Ids.uuid(WALLET, id), agentId: agent.id, organizationId: caller.organizationId }).first();
    if (!row) throw KeelError.notFound(WALLET);
    return row;
  }

  private async masterWalletFor(organizationId: string, blockchainId: string, requested?: string): Promise<string> {
    if (requested) {
      const id = Ids.filter('masterWalletId', requested)!;
      await this.masterWallets.row(organizationId, id);
      const found = await activeWalletOnChain(this.db, organizationId, blockchainId, id);
      if (!found) throw KeelError.invalidField('masterWalletId', 'the master wallet is inactive or not enabled on this blockchain');
      return found;
    }
    const found = await activeWalletOnChain(this.db, organizationId, blockchainId);
    if (!found) throw KeelError.invalidField('blockchainId', 'the organisation has no active master wallet on this blockchain: create one first, or name one with masterWalletId');
    return found;
  }

  /** Views of a page of wallets: each kind of thing they show read once for the whole page. */
  private async views(rows: AgentWalletRow[]): Promise<AgentWalletView[]> {
    if (!rows.length) return [];
    const organizationId = rows[0].organizationId;
    const addressIds = rows.map((r) => r.addressId);
    const addresses = await this.addresses.rowsByIds(organizationId, addressIds);
    const masters = await this.masterWallets.getMany(organizationId, [...addresses.values()].map((a) => a.masterWalletId));
    const amls = await this.aml.addressStatuses(this.db, addressIds);
    return Promise.all(rows.map((row) => this.view(row, addresses.get(row.addressId), masters, amls.get(row.addressId))));
  }

  private async view(row: AgentWalletRow, address: AddressModel | undefined, masters: Map<string, MasterWalletView>, aml: WalletAmlView | undefined): Promise<AgentWalletView> {
    const master = address && masters.get(address.masterWalletId);
    if (!address || !master) throw KeelError.notFound(WALLET);
    const chain = master.enabledBlockchains.find((c) => c.id === row.blockchainId) ?? blockchainView(await this.masterWallets.activeChain(row.blockchainId, 'blockchainId'));
    const c = readConfigurations(master.configurations);
    return {
      id: row.id,
      agentId: row.agentId,
      organizationId: row.organizationId,
      addressId: row.addressId,
      blockchainId: row.blockchainId,
      label: row.label,
      isActive: row.isActive && address.isActive,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      addressWallet: {
        id: address.id,
        name: address.name,
        description: null,
        walletAddress: address.address,
        network: master.network,
        masterWalletId: address.masterWalletId,
        blockchain: chain,
        metadata: address.metadata,
        isActive: address.isActive,
        enabledBlockchains: master.enabledBlockchains,
        // The spec's agent wallet configurations, read from the master wallet's that govern the address;
        // aml is the address's own screening (its deposits), not its master wallet's.
        configurations: {
          aml,
          disableAutoSweep: !c.autoSweep.enabled,
          enableGaslessWithdraw: c.enableGaslessWithdraw,
          enableMultiChain: c.enableMultiChain,
          settlement: { autoSettlementEnabled: c.autoSweep.enabled, settlementDelay: 0, minBalanceForSettlement: c.autoSweep.threshold },
          security: { requireSignatureForWithdrawals: c.security.requireApprovalForTransfers, maxWithdrawalAmount: c.security.maxTransferAmount, allowedDestinations: c.security.allowedRecipients },
          notifications: { onDeposit: true, onWithdrawal: true, onThresholdReached: c.monitoring.alertOnLargeTransfers },
        },
        createdAt: address.createdAt,
        updatedAt: address.updatedAt,
      },
    };
  }
}
