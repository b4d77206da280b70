import { Model } from 'objection';

export class BlockchainModel extends Model {
  static override tableName = 'blockchains';
  id!: string;
  chainId!: string;
  name!: string;
  slug!: string;
  symbol!: string;
  network!: string;
  tokenStandard!: string;
  logoUrl!: string;
  isActive!: boolean;
  isEvmCompatible!: boolean;
  isDev!: boolean;
  rpcUrl!: string;
  confirmations!: number;
  configurations!: Record<string, unknown> | null;
  /** Block 0's hash as first seen; null until the chain has been checked once. */
  genesisHash!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}

/** The native coin's asset row carries this address. */
export const NATIVE_ASSET_ADDRESS = '0x0000000000000000000000000000000000000000';

export class AssetModel extends Model {
  static override tableName = 'assets';
  id!: string;
  blockchainId!: string;
  name!: string;
  symbol!: string;
  decimals!: number;
  address!: string;
  standard!: string;
  logoUrl!: string;
  isActive!: boolean;
  isNative!: boolean;
  network!: string;
  configurations!: Record<string, unknown> | null;
  createdAt!: Date;
  updatedAt!: Date;
}
