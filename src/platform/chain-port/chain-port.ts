/**
 * What Keel's modules need of a chain, whatever its family: addresses, balances, blocks and the
 * transfers in them (deposit detection), fees, transfers built, signed and sent without ever paying
 * twice, and how final a transaction is. One implementation per family: evm-chain.ts (JSON-RPC over
 * ethers) and solana-chain.ts (@solana/kit), issue 35.
 *
 * Amounts are integers in the asset's smallest unit (lamports, wei, token base units). Positions on
 * the chain are "heights": a slot on Solana, a block number on EVM.
 */

export type ChainFamily = 'evm' | 'solana';

/** How final something is: seen (may vanish), confirmed (a supermajority / enough blocks), final (cannot be reverted). */
export type Finality = 'seen' | 'confirmed' | 'final';

/** The native coin, a token by its contract (EVM) or mint (Solana) address, or one NFT of a collection (EVM only). */
export type ChainAsset = { kind: 'native' } | { kind: 'token'; address: string; decimals: number } | { kind: 'nft'; address: string; standard: 'ERC721' | 'ERC1155'; tokenId: bigint };

/** An asset of Keel's registry (and for an NFT its token id) as the chain port names it. */
export function chainAsset(asset: { isNative: boolean; address: string; decimals: number; standard?: string }, tokenId?: bigint): ChainAsset {
  if (asset.isNative) return { kind: 'native' };
  if (tokenId !== undefined && (asset.standard === 'ERC721' || asset.standard === 'ERC1155')) return { kind: 'nft', address: asset.address, standard: asset.standard, tokenId };
  return { kind: 'token', address: asset.address, decimals: asset.decimals };
}

/** A block a scan read. */
export interface ChainBlock {
  height: number;
  hash: string;
  /** The previous block's hash (EVM, where a scan checks its blocks follow each other); null where the family's scan does not check it (Solana). */
  parentHash: string | null;
  /** Seconds since the epoch. */
  timestamp: number;
}

/** Value that moved to or from a watched address, as a deposit scanner reports it. */
export interface ChainTransfer {
  /** Transaction hash or signature. */
  txId: string;
  /** Unique within the transaction: `native`, `log:<i>` (`log:<i>:<j>` in a batch) on EVM; `native:<owner>` or `token:<mint>:<owner>` on Solana. */
  position: string;
  /**
   * The position as the numbers a record is keyed by, the same on every scan: EVM the log's index
   * (NATIVE_TRANSFER_INDEX for a native value transfer), Solana a 31-bit digest of `position`.
   */
  index: number;
  /** An ERC-1155 TransferBatch id's place in its log; 0 for every other transfer. */
  batchIndex: number;
  height: number;
  blockHash: string;
  /** Seconds since the epoch. */
  timestamp: number;
  /** The watched address, or the other side of a transfer from a watched address (on Solana the owner, not its token account). */
  to: string;
  /** The sender when it can be told (on Solana the sender that lost the most of the asset in the transaction: for a token account's tokens, its owner before it; for its SOL, that owner only when it signed the transaction, else the token account), else null. */
  from: string | null;
  /** Solana: every other sender, account by account (never netted per owner): each account, or token account's owner before the transaction, whose balance of the asset fell in it (screened as `from` is). */
  alsoFrom?: string[];
  asset: { kind: 'native' } | { kind: 'token'; address: string };
  amount: bigint;
  /** An NFT transfer's token id (amount is then the number of tokens: 1 for ERC-721). */
  tokenId?: bigint;
}

/** The log index recorded for an EVM native-coin transfer, which has no log. */
export const NATIVE_TRANSFER_INDEX = -1;

/** What a scan looks for. */
export interface ScanWatch {
  /** The watched addresses (EVM compares them ignoring case; Solana exactly). */
  addresses: ReadonlySet<string>;
  /** Token contracts whose transfers are read (EVM reads logs by contract; Solana reads every mint's balance changes and ignores this). */
  tokens?: readonly string[];
  /** NFT collections (ERC-721 / ERC-1155) whose transfers are read, with their token ids (EVM). */
  nfts?: readonly string[];
}

export interface ScannedRange {
  /**
   * Transfers into watched addresses, and on EVM out of them too (a sweep, a withdrawal seen on
   * chain: the recorder keeps an address's history of both directions; Solana reports incoming only).
   */
  transfers: ChainTransfer[];
  /** Every block in the range, oldest first (on Solana, heights without one were skipped), for reorganisation checks later. */
  blocks: ChainBlock[];
  /**
   * EVM: every transaction a watched address sent in the range, with what it paid for it (reverted
   * ones too: a transaction mined with status 0 moved nothing, and still paid its gas). Absent on
   * Solana, whose scan does not report fee payers.
   */
  fees?: PaidFee[];
}

/** The fee a watched address paid for a transaction it sent (EVM: gas used × effective gas price, with an OP-stack rollup's L1 data fee). */
export interface PaidFee {
  txId: string;
  /** The sender: the watched address that paid. */
  from: string;
  height: number;
  blockHash: string;
  fee: bigint;
}

/**
 * What a node says of the block at a height, at a finality: its `hash`; `none`, the node has no block
 * there on its chain and could have (Solana: a slot skipped or rolled back, at or below the node's
 * height and within the ledger it keeps; never on EVM); or `unknown`, the node cannot tell: the height
 * is above its height at that finality, or it does not have the block (EVM, which has a block at every
 * height; Solana, below its first available block). A node that is behind (a fallback, a restarted
 * node, a load-balanced backend) answers `unknown`, never another chain.
 */
export type BlockAt = { hash: string } | 'none' | 'unknown';

/**
 * A recorded block against what a node says of its height: still on the node's chain, `forked` (the
 * node has another block there, or none where it could have one), or `unknown` (the node is behind:
 * wait for it; a reorganisation is never concluded from a block the node cannot answer for).
 */
export function recordedBlock(at: BlockAt, recordedHash: string): 'canonical' | 'forked' | 'unknown' {
  if (at === 'unknown') return 'unknown';
  return at !== 'none' && at.hash === recordedHash ? 'canonical' : 'forked';
}

/** The chain changed under a scan (a reorganisation): nothing of it may be recorded; the caller scans again from its cursor. */
export class ChainMovedError extends Error {}

/** A transfer the chain refuses before it could land (it would fail: funds short, ...): nothing was sent, nothing charged. */
export class TransferRefused extends Error {}

/**
 * A transfer refused for its recipient, which cannot take the asset as a wallet would (Solana: an
 * account of a token program that is not a token account of the mint, or one of the sender's own):
 * nothing was sent. A caller names the recipient field in its 400 INVALID_ADDRESS.
 */
export class RecipientRefused extends TransferRefused {}

export interface TransferRequest {
  to: string;
  asset: ChainAsset;
  amount: bigint;
}

/** What a transfer will cost its sender beyond the amount. */
export interface FeeEstimate {
  /** The network fee (base and priority). */
  fee: bigint;
  /** Paid to create the recipient's account (Solana: the associated token account's rent), 0 when none is needed. */
  accountCreation: bigint;
  /** Native coin the sender needs in all: amount (if native) + fee + accountCreation. */
  nativeNeeded: bigint;
  /** The units the fee pays for: gas on EVM (the limit estimated), compute units on Solana (absent on an estimate read back from a record). */
  units?: bigint;
}

/**
 * A signed transaction, to be recorded durably before it is broadcast: the record is what lets a
 * retry find out whether it landed, and send it again or replace it only once it cannot land.
 */
export interface PreparedTransfer {
  txId: string;
  /** The signed transaction (base64 on Solana, 0x-hex on EVM). */
  raw: string;
  /** The chain's height past which it can no longer land (Solana: lastValidBlockHeight; EVM: null, only a transaction taking its nonce can stop it). */
  validThrough: number | null;
  /**
   * Solana: the slot of its blockhash (it can land only in a later one), what tells whether a node
   * can still show it never landed; null on EVM, and on a line recorded before it was kept.
   */
  validFrom: number | null;
  /** The sender and the nonce signed (EVM; null on Solana): what outcome() checks for a replacement. */
  nonce: { from: string; value: number } | null;
  fee: FeeEstimate;
}

/** What became of a prepared transfer. */
export type TransferOutcome =
  /**
   * `cost`: what the transaction cost its sender beyond the amount, read from the chain once final
   * (absent when it could not be read yet): the fee, and what it paid to create accounts (not the
   * estimate: an account created meanwhile by another transaction costs nothing).
   */
  | { state: 'landed'; height: number; finality: Finality; failed: boolean; error?: string; cost?: { fee: bigint; accountCreation: bigint } }
  /** Not seen yet and can still land: send the same transaction again. */
  | { state: 'pending' }
  /**
   * Not seen, and can no longer land: safe to prepare a new one. Solana: its blockhash validity has
   * passed at final; EVM: its nonce is used, at the chain's confirmation depth, by another transaction.
   */
  | { state: 'expired' }
  /**
   * Not seen, and can no longer land, but the node cannot show that it never landed (Solana: its
   * transaction history is off, or no longer reaches back to the blockhash, and its status cache
   * has forgotten the slots): neither sent again nor replaced, since a replacement could pay twice.
   * `reason` says what the operator can do.
   */
  | { state: 'undetermined'; reason: string };

/** `Signer`: what signs for an address on the family (Solana: a kit TransactionSigner; EVM: an ethers wallet). */
export interface ChainPort<Signer = unknown> {
  readonly family: ChainFamily;
  isAddress(value: string): boolean;
  /**
   * The chain's height at a finality. EVM: `seen` is the head; `confirmed` and `final` the newest
   * block with the chain's confirmation count (Keel credits an EVM deposit at that count, as it
   * always has; a node's `finalized` tag is not what deposits wait for). Solana: the commitments.
   */
  height(finality: Finality): Promise<number>;
  balance(address: string, asset: ChainAsset, finality?: Finality): Promise<bigint>;
  /**
   * The blocks of heights [from, to] at `finality` and the transfers in them of the watched
   * addresses. EVM throws ChainMovedError when the chain reorganised during the scan.
   */
  scan(from: number, to: number, watch: ScanWatch, finality: Finality): Promise<ScannedRange>;
  /** The hash of the block at a height now (null: skipped, rolled back, or not there yet). */
  blockHash(height: number, finality: Finality): Promise<string | null>;
  /** The block at a height as the node can vouch for it at `finality`, telling "not there" from "not there yet" (BlockAt). */
  blockAt(height: number, finality: Finality): Promise<BlockAt>;
  /** The time of the block at a height, in seconds since the epoch (null: no block there). */
  blockTime(height: number): Promise<number | null>;
  estimateTransfer(from: string, request: TransferRequest): Promise<FeeEstimate>;
  /**
   * Builds and signs a transfer; sends nothing. On EVM it takes the sender's next nonce from the
   * node (Keel's queueing EVM sender keeps its own count and signs with EvmChain.signWithNonce).
   */
  prepareTransfer(signer: Signer, request: TransferRequest): Promise<PreparedTransfer>;
  /**
   * Sends a prepared transfer (again); sending one that already landed is harmless. A transfer the
   * network refuses outright (it would fail: funds short, ...) throws: nothing was sent or charged,
   * and the caller may fail the transfer (its recorded transaction is then never sent again).
   */
  broadcast(prepared: PreparedTransfer): Promise<void>;
  outcome(prepared: PreparedTransfer): Promise<TransferOutcome>;
}

/** Where a sender keeps the transfer it prepared (a database row in Keel), written before broadcast. */
export interface PreparedTransferStore {
  load(): Promise<PreparedTransfer | undefined>;
  /** Records a prepared transfer, replacing an expired one. */
  save(prepared: PreparedTransfer, replacing?: PreparedTransfer): Promise<void>;
}

/**
 * Sends a transfer at most once, across crashes and retries: the prepared transaction is recorded
 * before it is broadcast; a retry looks the recorded one up and sends it again while it can still
 * land, and prepares (and records) a new one only once the old one has expired unseen.
 * Answers the transfer that was sent (or had already landed).
 */
export async function sendOnce<Signer>(chain: ChainPort<Signer>, signer: Signer, request: TransferRequest, store: PreparedTransferStore): Promise<PreparedTransfer> {
  const recorded = await store.load();
  if (recorded) {
    const outcome = await chain.outcome(recorded);
    if (outcome.state === 'landed' || outcome.state === 'undetermined') return recorded;
    if (outcome.state === 'pending') {
      await chain.broadcast(recorded);
      return recorded;
    }
  }
  const prepared = await chain.prepareTransfer(signer, request);
  await store.save(prepared, recorded);
  await chain.broadcast(prepared);
  return prepared;
}
