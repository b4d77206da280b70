import { Model } from 'objection';

/** Value that moved on chain to or from a wallet Keel holds, seen from that wallet's side. */
export class ChainTransferModel extends Model {
  static override tableName = 'chain_transfers';
  id!: string;
  organizationId!: string;
  blockchainId!: string;
  masterWalletId!: string;
  addressId!: string | null;
  assetId!: string;
  direction!: 'incoming' | 'outgoing';
  category!: TransferCategory;
  txHash!: string;
  logIndex!: number;
  blockNumber!: string;
  blockHash!: string;
  blockTimestamp!: Date;
  fromAddress!: string;
  toAddress!: string;
  rawValue!: string;
  status!: 'CONFIRMED' | 'REVERTED';
  revertedAt!: Date | null;
  /** Set when the sender was on a sanctions list: the deposit is flagged and held from auto-sweep. */
  amlFlaggedAt!: Date | null;
  amlMatches!: { list: string; address: string }[] | null;
  /** When an admin released the hold of a flagged deposit (POST /v1/aml/flagged-transfers/{id}/release). */
  amlReleasedAt!: Date | null;
  amlReleasedBy!: string | null;
  amlReleaseNote!: string | null;
  createdAt!: Date;
}

/** The spec's categories; Keel records external (native coin), erc20 and internal (between its own wallets). */
export type TransferCategory = 'external' | 'erc20' | 'erc721' | 'erc1155' | 'internal' | 'specialnft';

export interface ChainCursor {
  blockNumber: number;
  blockHash: string;
}
