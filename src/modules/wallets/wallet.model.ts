import { Model } from 'objection';
import type { WalletConfigurations } from './wallet-configurations';

export class MasterWalletModel extends Model {
  static override tableName = 'master_wallets';
  id!: string;
  organizationId!: string;
  blockchainId!: string;
  name!: string;
  description!: string | null;
  walletAddress!: string;
  sealedMnemonic!: string;
  /** EVM: the account's extended public key; null for a Solana wallet (ed25519: no public derivation). */
  accountXpub!: string | null;
  nextAddressIndex!: number;
  configurations!: WalletConfigurations;
  metadata!: Record<string, unknown>;
  isActive!: boolean;
  createdAt!: Date;
  updatedAt!: Date;
}

export class AddressModel extends Model {
  static override tableName = 'addresses';
  id!: string;
  organizationId!: string;
  masterWalletId!: string;
  derivationIndex!: number;
  address!: string;
  name!: string | null;
  metadata!: Record<string, unknown>;
  isActive!: boolean;
  createdAt!: Date;
  updatedAt!: Date;
}
