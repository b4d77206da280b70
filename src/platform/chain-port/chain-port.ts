/**
 * What Keel's modules need of a chain, whatever its family: addresses, balances, incoming transfers
 * (deposit detection), fees, transfers built, signed and sent without ever paying twice, and how
 * final a transaction is. One implementation per family (solana-chain.ts; EVM's code is still where
 * it was and moves behind this port next, issue 35).
 *
 * Amounts are integers in the asset's smallest unit (lamports, wei, token base units). Positions on
 * the chain are "heights": a slot on Solana, a block number on EVM.
 */

export type ChainFamily = 'evm' | 'solana';

/** How final something is: seen (may vanish), confirmed (a supermajority / enough blocks), final (cannot be reverted). */
export type Finality = 'seen' | 'confirmed' | 'final';

/** The native coin, or a token by its contract (EVM) or mint (Solana) address. */
export type ChainAsset = { kind: 'native' } | { kind: 'token'; address: string; decimals: number };

/** A transfer into a watched address, as a deposit scanner reports it. */
export interface IncomingTransfer {
  /** Transaction hash or signature. */
  txId: string;
  /** Unique within the transaction: e.g. `native:<address>` or `token:<mint>:<address>`. */
  position: string;
  height: number;
  blockHash: string;
  /** Seconds since the epoch. */
  timestamp: number;
  /** The watched address (on Solana the owner, not its token account). */
  to: string;
  /** The sender when it can be told (the account whose balance of the asset fell), else null. */
  from: string | null;
  asset: { kind: 'native' } | { kind: 'token'; address: string };
  amount: bigint;
}

export interface ScannedRange {
  transfers: IncomingTransfer[];
  /** Every block in the range (heights without one were skipped), for reorganisation checks later. */
  blocks: { height: number; hash: string }[];
}

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
}

/**
 * A signed transaction, to be recorded durably before it is broadcast: the record is what lets a
 * retry find out whether it landed, and send it again or replace it only once it cannot land.
 */
export interface PreparedTransfer {
  txId: string;
  /** The signed transaction (base64 on Solana, 0x-hex on EVM). */
  raw: string;
  /** The chain's height past which it can no longer land (Solana: lastValidBlockHeight; EVM: null, a nonce replaces it). */
  validThrough: number | null;
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
  /** Not seen, and can no longer land (its validity has passed at final): safe to prepare a new one. */
  | { state: 'expired' };

/** `Signer`: what signs for an address on the family (Solana: a kit TransactionSigner; EVM: an ethers wallet). */
export interface ChainPort<Signer = unknown> {
  readonly family: ChainFamily;
  isAddress(value: string): boolean;
  /** The chain's height at a finality. */
  height(finality: Finality): Promise<number>;
  balance(address: string, asset: ChainAsset, finality?: Finality): Promise<bigint>;
  /** Transfers into `watched` addresses in heights [from, to], from blocks at `finality`. */
  scanIncoming(from: number, to: number, watched: ReadonlySet<string>, finality: Finality): Promise<ScannedRange>;
  /** The hash of the block at a height now (null: skipped, rolled back, or not there yet). */
  blockHash(height: number, finality: Finality): Promise<string | null>;
  estimateTransfer(from: string, request: TransferRequest): Promise<FeeEstimate>;
  /** Builds and signs a transfer; sends nothing. */
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
    if (outcome.state === 'landed') return recorded;
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
