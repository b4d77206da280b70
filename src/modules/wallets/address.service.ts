import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { Outbox } from '../../platform/events/outbox';
import type { GuardedHttp } from '../../platform/net/guarded-http';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import type { ChainNetworks, ChainService } from '../chains';
import { AddressModel, MasterWalletModel } from './wallet.model';
import type { WalletKeys } from './wallet-keys';
import { MasterWalletService, parseMasterWalletId } from './master-wallet.service';
import { recoveryReader, type RecoverableAssetsView, type RecoverableTokenView, type RecoveryReader } from './recovery-readers';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';

const MAX_RECOVERY_TOKENS = 50;

export interface CreateAddress {
  name?: string;
  metadata?: Record<string, unknown>;
}

/** A deposit address as services and the API show it. */
export interface AddressView {
  id: string;
  address: string;
  name: string | null;
  masterWalletId: string;
  /** i in m/44'/60'/0'/0/i (Solana: m/44'/501'/i'/0'); never reused. */
  derivationIndex: number;
  metadata: Record<string, unknown>;
  isActive: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface AddressFilter {
  isActive?: boolean;
}

/** Which balances to read for recoverableAssets. */
export interface RecoverableAssetsQuery {
  blockchainId: string;
  /** Read through this JSON-RPC URL instead of the configured one. */
  rpcUrl?: string;
  /** Comma-separated token contracts (Solana: mints); default the registered tokens of the chain (Solana: and every mint held). */
  tokenAddresses?: string;
}

export type { RecoverableAssetsView, RecoverableTokenView };

export interface UpdateAddress {
  name?: string;
  metadata?: Record<string, unknown>;
  isActive?: boolean;
}

function addressView(a: AddressModel): AddressView {
  return {
    id: a.id,
    address: a.address,
    name: a.name,
    masterWalletId: a.masterWalletId,
    derivationIndex: a.derivationIndex,
    metadata: a.metadata,
    isActive: a.isActive,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

function addressEventData(a: AddressView, wallet: MasterWalletModel): Record<string, unknown> {
  return { ...addressView(a as AddressModel), masterWallet: { id: wallet.id, name: wallet.name, walletAddress: wallet.walletAddress } };
}

/** Deposit addresses: children of a master wallet's HD account, one per index, never reused. */
export class AddressService {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly wallets: MasterWalletService,
    private readonly keys: WalletKeys,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    /** The guarded connector a caller's rpcUrl is read through. */
    private readonly rpcConnector: GuardedHttp,
    private readonly uow: UnitOfWork,
  ) {}

  async create(organizationId: string, masterWalletId: string, input: CreateAddress): Promise<AddressView> {
    return this.uow.run('address.create', (trx) => this.createIn(trx, organizationId, masterWalletId, input));
  }

  /** `create` inside the caller's transaction (an agent wallet links the new address in the same one). */
  async createIn(trx: Knex.Transaction, organizationId: string, masterWalletId: string, input: CreateAddress): Promise<AddressView> {
    masterWalletId = parseMasterWalletId(masterWalletId);
    // The row lock serialises concurrent requests for one wallet: each takes the next index once.
    const [claimed] = await trx('master_wallets')
      .where({ id: masterWalletId, organization_id: organizationId })
      .increment('next_address_index', 1)
      .returning(['next_address_index', 'account_xpub', 'sealed_mnemonic', 'blockchain_id', 'is_active']);
    if (!claimed) throw new KeelError('WALLET_NOT_FOUND', 'Master wallet not found');
    if (!claimed.isActive) throw KeelError.invalidField('masterWalletId', 'the master wallet is deactivated');
    const index = Number(claimed.nextAddressIndex) - 1;
    const row = await AddressModel.query(trx).insertAndFetch({
      organizationId,
      masterWalletId,
      derivationIndex: index,
      address: await (await this.wallets.familyOf(claimed.blockchainId, trx)).addressAt({ id: masterWalletId, sealedMnemonic: claimed.sealedMnemonic, accountXpub: claimed.accountXpub }, index),
      name: input.name ?? null,
      metadata: input.metadata ?? {},
    } as Partial<AddressModel>);
    const wallet = await this.wallets.row(organizationId, masterWalletId, trx);
    const view = addressView(row);
    await this.outbox.publish(trx, { organizationId, type: 'address.created', data: addressEventData(view, wallet) });
    return view;
  }

  async list(organizationId: string, masterWalletId: string, args: PageWindow & AddressFilter): Promise<PageResult<AddressView>> {
    masterWalletId = parseMasterWalletId(masterWalletId);
    await this.wallets.row(organizationId, masterWalletId);
    const q = AddressModel.query(this.db)
      .where({ organizationId, masterWalletId })
      .modify((b) => (args.isActive === undefined ? b : b.where('isActive', args.isActive)));
    const { rows, total } = await fetchPage<AddressModel>(q, args, [{ column: 'derivationIndex', order: 'desc' }]);
    return toPage(rows.map(addressView), total, args);
  }

  async get(organizationId: string, id: string): Promise<AddressView> {
    return addressView(await this.row(organizationId, id));
  }

  /** Several of the organisation's addresses in one query, by id (unknown ones absent). */
  async rowsByIds(organizationId: string, ids: string[]): Promise<Map<string, AddressModel>> {
    const rows = ids.length ? await AddressModel.query(this.db).where({ organizationId }).whereIn('id', [...new Set(ids)]) : [];
    return new Map(rows.map((r) => [r.id, r]));
  }

  async row(organizationId: string, id: string, trx: Knex | Knex.Transaction = this.db): Promise<AddressModel> {
    const row = await AddressModel.query(trx).findOne({ id: Ids.uuid('Address', id), organizationId });
    if (!row) throw KeelError.notFound('Address');
    return row;
  }

  async update(organizationId: string, id: string, input: UpdateAddress): Promise<AddressView> {
    id = Ids.uuid('Address', id);
    return this.uow.run('address.update', async (trx) => {
      const current = await AddressModel.query(trx).findOne({ id, organizationId }).forUpdate();
      if (!current) throw KeelError.notFound('Address');
      const patch: Partial<AddressModel> = { updatedAt: new Date() };
      if (input.name !== undefined) patch.name = input.name;
      if (input.metadata !== undefined) patch.metadata = input.metadata;
      if (input.isActive !== undefined) patch.isActive = input.isActive;
      const row = await AddressModel.query(trx).patchAndFetchById(id, patch);
      const wallet = await this.wallets.row(organizationId, row.masterWalletId, trx);
      const view = addressView(row);
      await this.outbox.publish(trx, { organizationId, type: 'address.updated', data: addressEventData(view, wallet) });
      return view;
    });
  }

  /**
   * Native and token balances of a Keel-held address on a chain, read from the chain: what could
   * be recovered from it. Tokens: the chain's registered tokens (Solana: and every mint the address
   * holds an account of), or the given ones (recovery-readers.ts).
   */
  async recoverableAssets(organizationId: string, id: string, args: RecoverableAssetsQuery): Promise<RecoverableAssetsView> {
    const address = await this.row(organizationId, id);
    const chain = await this.wallets.activeChain(args.blockchainId, 'blockchainId');
    const reader = recoveryReader(chain.family, this.networks, this.rpcConnector);
    const tokens = args.tokenAddresses ? parseTokenList(args.tokenAddresses, reader) : null;
    const registered = await this.chains.assetsOf(chain.id);
    try {
      return await reader.read({ chain, owner: address.address, tokens, registered, rpcUrl: args.rpcUrl });
    } catch (e) {
      if (e instanceof KeelError) throw e;
      throw new KeelError('UPSTREAM_ERROR', `Could not read balances from ${chain.name}'s node`);
    }
  }
}

function parseTokenList(text: string, reader: RecoveryReader): string[] {
  const parts = text.split(',').map((p) => p.trim()).filter(Boolean);
  if (!parts.length) throw KeelError.invalidField('tokenAddresses', 'must list at least one token address');
  if (parts.length > MAX_RECOVERY_TOKENS) throw KeelError.invalidField('tokenAddresses', `at most ${MAX_RECOVERY_TOKENS} tokens`);
  return [
    ...new Set(
      parts.map((p) => {
        const canonical = reader.tokenAddress(p);
        if (!canonical) throw new KeelError('INVALID_ADDRESS', `${p} is not a valid ${reader.tokenForm}`, { field: 'tokenAddresses' });
        return canonical;
      }),
    ),
  ];
}
