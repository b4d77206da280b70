import { Model } from 'objection';
import type { ChainFamily } from '../../platform/chain-port/chain-port';

export class BlockchainModel extends Model {
  static override tableName = 'blockchains';
  id!: string;
  /** EVM: the chain id (bigint, as a string); Solana: null (a cluster is known by its network). */
  chainId!: string | null;
  /** evm or solana (migration 046): one chain id an EVM chain, one network a Solana cluster. */
  family!: ChainFamily;
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

/** The native coin's asset row carries this address (an EVM chain's). */
export const NATIVE_ASSET_ADDRESS = '0x0000000000000000000000000000000000000000';
/** A Solana cluster's native coin (SOL) carries the System Program's address, as `address` has no zero address on Solana. */
export const SOLANA_NATIVE_ASSET_ADDRESS = '11111111111111111111111111111111';

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
