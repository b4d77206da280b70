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
  /** Other senders of the transfer (Solana: every other account whose balance of the asset fell in the transaction); empty on EVM. */
  alsoFrom!: string[];
  toAddress!: string;
  /** For an NFT: the number of tokens moved (1 for ERC-721). */
  rawValue!: string;
  /** An NFT transfer's token id, decimal; null for native coin and ERC-20 transfers. */
  tokenId!: string | null;
  /** The id's position in an ERC-1155 TransferBatch log; 0 for every other transfer. */
  batchIndex!: number;
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

/**
 * The spec's categories. Keel records external (native coin), erc20, erc721, erc1155 and internal
 * (between two wallets of one organisation, whatever moved); specialnft (non-standard NFT contracts
 * such as CryptoPunks) is reserved and never recorded.
 */
export const TRANSFER_CATEGORIES = ['external', 'erc20', 'erc721', 'erc1155', 'internal', 'specialnft'] as const;
export type TransferCategory = (typeof TRANSFER_CATEGORIES)[number];

/** Whether a recorded transfer moved an NFT (it carries a token id). */
export const isNftTransfer = (t: { tokenId: string | null }): boolean => t.tokenId !== null;

export interface ChainCursor {
  blockNumber: number;
  blockHash: string;
}
