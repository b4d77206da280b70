import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { KeyPairSigner } from '@solana/kit';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import { readConfigurations, WalletConfigurations } from './wallet-configurations';
import type { AddressModel, MasterWalletModel } from './wallet.model';
import type { MasterWalletService } from './master-wallet.service';
import type { AddressService } from './address.service';
import type { WalletKeys } from './wallet-keys';

export type WalletSource = { masterWalletId: string } | { addressId: string };

/** The wallet an input names with exactly one of masterWalletId and addressId (422 otherwise; a malformed id is 404). */
export function walletSourceOf(input: { masterWalletId?: string | null; addressId?: string | null }): WalletSource {
  if (input.masterWalletId && !input.addressId) return { masterWalletId: Ids.uuid('Master wallet', input.masterWalletId) };
  if (input.addressId && !input.masterWalletId) return { addressId: Ids.uuid('Address', input.addressId) };
  throw KeelError.invalidField('masterWalletId', 'give exactly one of masterWalletId and addressId');
}

/** An address Keel can send from: a master wallet's own address (index 0) or a deposit address. */
export interface SendingWallet {
  organizationId: string;
  masterWalletId: string;
  /** Null for the master wallet's own address. */
  addressId: string | null;
  derivationIndex: number;
  address: string;
  name: string | null;
  masterWalletName: string;
  masterWalletAddress: string;
  configurations: WalletConfigurations;
  /** The chains the master wallet is enabled on. */
  blockchainIds: string[];
}

/** The sending side of wallets: who may send from where, and the signing keys (opened per signature). */
export class SendingWallets {
  constructor(
    private readonly db: Knex,
    private readonly keys: WalletKeys,
    private readonly masterWallets: MasterWalletService,
    private readonly addresses: AddressService,
  ) {}

  async resolve(organizationId: string, source: WalletSource, trx: Knex | Knex.Transaction = this.db, opts: { deactivated?: 'allowed' } = {}): Promise<SendingWallet> {
    const { address, wallet } = await this.rowsOf(organizationId, source, trx);
    if (address && !address.isActive && opts.deactivated !== 'allowed') throw new KeelError('CONFLICT', 'The address is deactivated');
    if (!wallet.isActive) throw new KeelError('CONFLICT', 'The master wallet is inactive');
    const chains = await trx('master_wallet_chains').where({ master_wallet_id: wallet.id }).select('blockchain_id');
    return {
      organizationId,
      masterWalletId: wallet.id,
      addressId: address?.id ?? null,
      derivationIndex: address?.derivationIndex ?? 0,
      address: address?.address ?? wallet.walletAddress,
      name: address ? address.name : wallet.name,
      masterWalletName: wallet.name,
      masterWalletAddress: wallet.walletAddress,
      configurations: readConfigurations(wallet.configurations),
      blockchainIds: chains.map((c: { blockchainId: string }) => c.blockchainId),
    };
  }

  /** The wallet a source names in the organisation (404 otherwise), active or not: what reading its history (an audit list) needs. */
  async locate(organizationId: string, source: WalletSource, trx: Knex | Knex.Transaction = this.db): Promise<{ masterWalletId: string; addressId: string | null }> {
    const { address, wallet } = await this.rowsOf(organizationId, source, trx);
    return { masterWalletId: wallet.id, addressId: address?.id ?? null };
  }

  private async rowsOf(organizationId: string, source: WalletSource, trx: Knex | Knex.Transaction): Promise<{ address: AddressModel | undefined; wallet: MasterWalletModel }> {
    if (!('addressId' in source)) return { address: undefined, wallet: await this.masterWallets.row(organizationId, source.masterWalletId, trx) };
    const address = await this.addresses.row(organizationId, source.addressId, trx);
    return { address, wallet: await this.masterWallets.row(organizationId, address.masterWalletId, trx) };
  }

  /** Of these master wallets, the ids of those with configurations.autoSweep.enabled. */
  async withAutoSweep(ids: string[], trx: Knex | Knex.Transaction = this.db): Promise<Set<string>> {
    const rows = await trx('master_wallets').whereIn('id', ids).whereRaw(`(configurations->'autoSweep'->>'enabled')::boolean`).select('id');
    return new Set(rows.map((r: { id: string }) => r.id));
  }

  /** The key of a master wallet's own address, or of one of its deposit addresses, connected to `provider`; hold it only to sign. */
  async signer(organizationId: string, masterWalletId: string, addressId: string | null, provider?: ethers.Provider): Promise<ethers.Wallet> {
    const [wallet, address] = await Promise.all([this.masterWallets.row(organizationId, masterWalletId), addressId ? this.addresses.row(organizationId, addressId) : undefined]);
    return this.keys.signer(wallet.id, wallet.sealedMnemonic, address?.derivationIndex ?? 0, provider);
  }

  /** The Solana key of a master wallet's own address or of one of its deposit addresses (ed25519, opened for this signer); hold it only to sign. */
  async solanaSigner(organizationId: string, masterWalletId: string, addressId: string | null): Promise<KeyPairSigner> {
    const [wallet, address] = await Promise.all([this.masterWallets.row(organizationId, masterWalletId), addressId ? this.addresses.row(organizationId, addressId) : undefined]);
    return this.keys.solanaSigner(wallet.id, wallet.sealedMnemonic, address?.derivationIndex ?? 0);
  }
}
