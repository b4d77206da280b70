/**
 * The sandbox Solana network's ledger: LiteSVM executes the transactions, this keeps what a
 * validator keeps around them and LiteSVM does not: slots and blocks (a hash chain), block heights
 * and the 150-block validity window of recent blockhashes, transaction statuses and history by
 * signature and by address, commitment levels, and the accounts' state before every recent slot,
 * so that reads at `confirmed` or `finalized` see the state of that slot and recent slots can be
 * rolled back (a fork abandoned).
 *
 * One block is in progress (the head: `processed`); sealing it fixes its blockhash and opens the
 * next slot. `confirmed` is the newest sealed block `confirmedLag` blocks behind the head,
 * `finalized` the one `finalizedLag` blocks behind; neither ever moves back. Only slots after the
 * finalized one can be rolled back.
 */
import { createHash } from 'node:crypto';
import { Clock, LiteSVM, FailedTransactionMetadata, TransactionMetadata } from 'litesvm';
import {
  Address,
  EncodedAccount,
  MaybeEncodedAccount,
  Transaction,
  address,
  getAddressDecoder,
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  lamports,
} from '@solana/kit';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from '../chain-port/spl-token-facts';
import { RpcTransactionError, rpcTransactionError } from './transaction-errors';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export const SYSTEM_PROGRAM = address('11111111111111111111111111111111');
/** A recent blockhash stays valid for this many blocks after its own (as on Solana). */
export const MAX_PROCESSING_AGE = 150;

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  amount: bigint;
  decimals: number;
}

/** A decoded legacy or v0 message (v1 messages are refused). */
export type CompiledMessage = Exclude<ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>, { version: 1 }>;

/** A transaction that landed in a block, with what JSON-RPC reports of it. */
export interface LandedTransaction {
  signature: string;
  slot: number;
  /** Position in its block. */
  index: number;
  wire: Uint8Array;
  message: CompiledMessage;
  accountKeys: Address[];
  err: RpcTransactionError | null;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  logs: string[];
  computeUnitsConsumed: bigint;
}

export interface Block {
  slot: number;
  parentSlot: number;
  blockHeight: number;
  /** Set when the block is sealed. */
  blockhash: string;
  previousBlockhash: string;
  /** Milliseconds since the epoch, when the slot opened. */
  timeMs: number;
  transactions: LandedTransaction[];
  /** Each account this block touched, as it was before the block; dropped once the block is final. */
  before: Map<string, MaybeEncodedAccount> | null;
}

/** What happened to a transaction handed to the ledger. */
export type Execution =
  | { landed: true; transaction: LandedTransaction }
  /** Refused before execution or failed without being charged: not in any block (as on Solana). */
  | { landed: false; signature: string; err: RpcTransactionError; logs: string[] };

export interface Simulation {
  err: RpcTransactionError | null;
  logs: string[];
  unitsConsumed: bigint;
  /** Fee payer's lamports before and after (for fee estimates). */
  accounts: EncodedAccount[];
}

export interface LedgerOptions {
  /** Blocks between the head and `confirmed` (at least 1). */
  confirmedLag: number;
  /** Blocks between the head and `finalized` (more than confirmedLag). */
  finalizedLag: number;
}

const GENESIS_SEED = 'keel solana devnet genesis';

function sha256(...parts: ArrayLike<number>[]): Uint8Array {
  const h = createHash('sha256');
  for (const p of parts) h.update(Uint8Array.from(p));
  return new Uint8Array(h.digest());
}

function u64le(n: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
}

const b58 = getBase58Decoder();
const fromB58 = getBase58Encoder();
const addressDecoder = getAddressDecoder();
const txDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();

export function decodeWireTransaction(wire: Uint8Array): { transaction: Transaction; message: CompiledMessage; signature: string } {
  const transaction = txDecoder.decode(wire);
  const decoded = messageDecoder.decode(transaction.messageBytes);
  if (decoded.version === 1) throw new Error('version 1 transactions are not served');
  const message = decoded as CompiledMessage;
  if (Object.keys(transaction.signatures).length === 0) throw new Error('the transaction has no signer');
  // An unsigned transaction (for simulation) has an all-zero first signature.
  const first = Object.values(transaction.signatures)[0] ?? new Uint8Array(64);
  return { transaction, message, signature: b58.decode(first) };
}

/** Whether the account at `index` of a message is writable (from the message header's counts). */
function isWritable(header: CompiledMessage['header'], count: number, index: number): boolean {
  if (index < header.numSignerAccounts) return index < header.numSignerAccounts - header.numReadonlySignerAccounts;
  return index < count - header.numReadonlyNonSignerAccounts;
}

/**
 * Whether an account is a token account: the Token program's are 165 bytes (its mints 82, its
 * multisigs 355); Token-2022's are 165 bytes, or longer with the account-type byte after them set to 2.
 */
export function isTokenAccount(a: EncodedAccount): boolean {
  const length = a.data.length;
  if (a.programAddress === TOKEN_PROGRAM) return length === 165;
  return a.programAddress === TOKEN_2022_PROGRAM && (length === 165 || (length > 165 && a.data[165] === 2));
}

/** The owner of a token account (Token or Token-2022), undefined for any other account. */
function tokenAccountOwner(a: EncodedAccount): string | undefined {
  if (!isTokenAccount(a)) return undefined;
  return addressDecoder.decode(new Uint8Array(a.data).subarray(32, 64));
}

function absent(addr: Address): EncodedAccount {
  return { address: addr, lamports: lamports(0n), data: new Uint8Array(), programAddress: SYSTEM_PROGRAM, executable: false, space: 0n };
}

export class SolanaLedger {
  readonly svm: LiteSVM;
  private readonly sealed: Block[] = [];
  private readonly bySlot = new Map<number, Block>();
  private readonly bySignature = new Map<string, LandedTransaction>();
  private readonly byAddress = new Map<string, LandedTransaction[]>();
  private readonly blockhashHeights = new Map<string, number>();
  private readonly tokenAccountsByOwner = new Map<string, Set<string>>();
  private headBlock!: Block;
  private finalized = 0;
  private confirmed = 0;

  constructor(
    private readonly options: LedgerOptions,
    genesisTimeMs: number,
    genesis: (svm: LiteSVM) => void,
  ) {
    if (!(options.confirmedLag >= 1 && options.finalizedLag > options.confirmedLag)) throw new Error('SolanaLedger: need 1 <= confirmedLag < finalizedLag');
    // Keel checks blockhashes itself (the 150-block window; LiteSVM only knows its latest one) and
    // signatures already seen (LiteSVM's history would forget rolled-back ones wrongly).
    this.svm = new LiteSVM().withBlockhashCheck(false).withTransactionHistory(0n);
    genesis(this.svm);
    const hash = b58.decode(sha256(new TextEncoder().encode(GENESIS_SEED)));
    const block: Block = { slot: 0, parentSlot: 0, blockHeight: 0, blockhash: hash, previousBlockhash: hash, timeMs: genesisTimeMs, transactions: [], before: null };
    this.sealed.push(block);
    this.bySlot.set(0, block);
    this.blockhashHeights.set(hash, 0);
    this.open(1, block, genesisTimeMs);
  }

  get head(): Block {
    return this.headBlock;
  }

  get genesisHash(): string {
    return this.sealed[0].blockhash;
  }

  slot(commitment: Commitment): number {
    if (commitment === 'processed') return this.headBlock.slot;
    return commitment === 'confirmed' ? this.confirmed : this.finalized;
  }

  /** The newest sealed block at a commitment (processed: the newest sealed one). */
  latestBlock(commitment: Commitment): Block {
    if (commitment === 'processed') return this.sealed[this.sealed.length - 1];
    return this.bySlot.get(this.slot(commitment))!;
  }

  /** A sealed block at or below a commitment; undefined for a slot without one (skipped, or not yet there). */
  block(slot: number, commitment: Commitment): Block | undefined {
    const block = this.bySlot.get(slot);
    return block && slot <= this.slot(commitment) ? block : undefined;
  }

  /** Slots of sealed blocks in [from, to], at or below a commitment. */
  blockSlots(from: number, to: number, commitment: Commitment): number[] {
    const top = Math.min(to, this.slot(commitment));
    const out: number[] = [];
    for (let i = this.firstAtOrAfter(from); i < this.sealed.length && this.sealed[i].slot <= top; i++) out.push(this.sealed[i].slot);
    return out;
  }

  /** Index of the first sealed block at or after a slot (sealed blocks are in slot order). */
  private firstAtOrAfter(slot: number): number {
    let lo = 0;
    let hi = this.sealed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sealed[mid].slot < slot) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The block height by which a blockhash stops being accepted; undefined when it is not a recent blockhash. */
  lastValidBlockHeight(blockhash: string): number | undefined {
    const height = this.blockhashHeights.get(blockhash);
    if (height === undefined) return undefined;
    const last = height + MAX_PROCESSING_AGE;
    return last >= this.headBlock.blockHeight ? last : undefined;
  }

  /** Seals the head and opens the next slot. */
  seal(timeMs: number): Block {
    const head = this.headBlock;
    head.blockhash = b58.decode(sha256(fromB58.encode(head.previousBlockhash), u64le(head.slot), ...head.transactions.map((t) => fromB58.encode(t.signature))));
    this.sealed.push(head);
    this.bySlot.set(head.slot, head);
    this.blockhashHeights.set(head.blockhash, head.blockHeight);
    // Blockhashes too old to be valid again (even after the deepest rollback allowed) are forgotten.
    const expired = this.sealed[this.sealed.length - 1 - (MAX_PROCESSING_AGE + this.options.finalizedLag + 2)];
    if (expired) this.blockhashHeights.delete(expired.blockhash);
    this.advanceCommitments();
    this.open(head.slot + 1, head, timeMs);
    return head;
  }

  /** Seals blocks until the head is `slot` (a replay, or catching up after a restart). */
  advanceTo(slot: number, timeMs: (slot: number) => number): void {
    while (this.headBlock.slot < slot) this.seal(timeMs(this.headBlock.slot + 1));
  }

  transaction(signature: string, commitment: Commitment): LandedTransaction | undefined {
    const tx = this.bySignature.get(signature);
    return tx && tx.slot <= this.slot(commitment) ? tx : undefined;
  }

  /** Landed transactions naming an address, newest first, at or below a commitment. */
  transactionsOf(addr: string, commitment: Commitment): LandedTransaction[] {
    const top = this.slot(commitment);
    return (this.byAddress.get(addr) ?? []).filter((t) => t.slot <= top).reverse();
  }

  /** An account as it was at the end of the commitment's slot (processed: as it is now). */
  account(addr: Address, commitment: Commitment): MaybeEncodedAccount {
    const at = this.slot(commitment);
    for (const block of this.after(at)) {
      const before = block.before?.get(addr);
      if (before) return before;
    }
    return this.svm.getAccount(addr);
  }

  /**
   * The token accounts (Token and Token-2022) whose owner is `owner` at a commitment. Every account
   * that ever held a token account's shape for an owner is indexed when a transaction writes it; the
   * state at the commitment decides whether it still is one.
   */
  tokenAccountsOf(owner: Address, commitment: Commitment): EncodedAccount[] {
    const out: EncodedAccount[] = [];
    for (const addr of this.tokenAccountsByOwner.get(owner) ?? []) {
      const a = this.account(addr as Address, commitment);
      if (a.exists && tokenAccountOwner(a) === owner) out.push(a);
    }
    return out;
  }

  /** Runs a transaction in the head block. */
  execute(wire: Uint8Array): Execution {
    const { transaction, message, signature } = decodeWireTransaction(wire);
    const refused = (err: RpcTransactionError, logs: string[] = []): Execution => ({ landed: false, signature, err, logs });
    if (this.bySignature.has(signature)) return refused('AlreadyProcessed');
    if ('addressTableLookups' in message && (message.addressTableLookups?.length ?? 0) > 0) return refused('AddressLookupTableNotFound');
    if (this.lastValidBlockHeight(message.lifetimeToken) === undefined) return refused('BlockhashNotFound');

    const keys = message.staticAccounts;
    const head = this.headBlock;
    // Only writable accounts can change: their images are read before and after; a read-only one's
    // balance is read once (reading whole accounts, programs included, is most of the cost here).
    const writable = keys.map((_, i) => isWritable(message.header, keys.length, i));
    const readOnly = keys.map((k, i) => (writable[i] ? undefined : (this.svm.getBalance(k) ?? 0n)));
    const image = (k: Address, i: number): MaybeEncodedAccount | undefined => (writable[i] ? this.svm.getAccount(k) : undefined);
    const pre = keys.map(image);
    const result = this.svm.sendTransaction(transaction);
    const post = keys.map(image);
    for (const a of post) {
      const owner = a?.exists ? tokenAccountOwner(a) : undefined;
      if (!owner) continue;
      const set = this.tokenAccountsByOwner.get(owner) ?? new Set<string>();
      set.add(a!.address);
      this.tokenAccountsByOwner.set(owner, set);
    }
    const lamportsAt = (images: (MaybeEncodedAccount | undefined)[]) => images.map((a, i) => (a ? (a.exists ? BigInt(a.lamports) : 0n) : BigInt(readOnly[i]!)));
    const preBalances = lamportsAt(pre);
    const postBalances = lamportsAt(post);
    const fee = preBalances.reduce((s, a) => s + a, 0n) - postBalances.reduce((s, a) => s + a, 0n);
    const failed = result instanceof FailedTransactionMetadata;
    const err = failed ? rpcTransactionError(result.err()) : null;
    const meta: TransactionMetadata = failed ? result.meta() : result;
    // A transaction that failed before execution charges nothing and is not in any block.
    if (failed && fee === 0n) return refused(err!, meta.logs());
    for (const [i, k] of keys.entries()) if (pre[i] && !head.before!.has(k)) head.before!.set(k, pre[i]!);

    const landed: LandedTransaction = {
      signature,
      slot: head.slot,
      index: head.transactions.length,
      wire,
      message,
      accountKeys: keys,
      err,
      fee,
      preBalances,
      postBalances,
      preTokenBalances: this.tokenBalances(pre),
      postTokenBalances: this.tokenBalances(post),
      logs: meta.logs(),
      computeUnitsConsumed: meta.computeUnitsConsumed(),
    };
    head.transactions.push(landed);
    this.bySignature.set(signature, landed);
    for (const k of new Set(keys)) {
      const list = this.byAddress.get(k) ?? [];
      list.push(landed);
      this.byAddress.set(k, list);
    }
    return { landed: true, transaction: landed };
  }

  /** Runs a transaction against the head's state without keeping anything. */
  simulate(wire: Uint8Array, sigVerify: boolean): Simulation {
    const { transaction } = decodeWireTransaction(wire);
    if (!sigVerify) this.svm.withSigverify(false);
    try {
      const result = this.svm.simulateTransaction(transaction);
      if (result instanceof FailedTransactionMetadata) {
        const meta = result.meta();
        return { err: rpcTransactionError(result.err()), logs: meta.logs(), unitsConsumed: meta.computeUnitsConsumed(), accounts: [] };
      }
      const meta = result.meta();
      return { err: null, logs: meta.logs(), unitsConsumed: meta.computeUnitsConsumed(), accounts: result.postAccounts() };
    } finally {
      if (!sigVerify) this.svm.withSigverify(true);
    }
  }

  /**
   * Abandons every block after `slot` (which must be a block at or after the finalized one): their
   * transactions are undone and forgotten, their blockhashes no longer accepted, and the next block
   * is built on `slot` at the slot after the old head (the abandoned slots read as skipped).
   * Answers the signatures that were undone.
   */
  rollback(slot: number, timeMs: number): string[] {
    const target = this.bySlot.get(slot);
    if (!target) throw new Error(`slot ${slot} has no block`);
    if (slot < this.finalized) throw new Error(`slot ${slot} is finalized (finalized: ${this.finalized})`);
    const oldHead = this.headBlock;
    const abandoned = [oldHead, ...this.sealed.filter((b) => b.slot > slot).reverse()];
    const undone: string[] = [];
    for (const block of abandoned) {
      for (const [addr, before] of block.before ?? []) this.svm.setAccount(before.exists ? before : absent(addr as Address));
      for (const tx of block.transactions) {
        undone.push(tx.signature);
        this.bySignature.delete(tx.signature);
        for (const k of new Set(tx.accountKeys)) {
          const list = this.byAddress.get(k);
          if (list) this.byAddress.set(k, list.filter((t) => t !== tx));
        }
      }
      if (block !== oldHead) {
        this.bySlot.delete(block.slot);
        this.blockhashHeights.delete(block.blockhash);
      }
    }
    this.sealed.length = this.sealed.indexOf(target) + 1;
    this.confirmed = Math.min(this.confirmed, slot);
    this.open(oldHead.slot + 1, target, timeMs);
    return undone;
  }

  private open(slot: number, parent: Block, timeMs: number): void {
    this.headBlock = {
      slot,
      parentSlot: parent.slot,
      blockHeight: parent.blockHeight + 1,
      blockhash: '',
      previousBlockhash: parent.blockhash,
      timeMs,
      transactions: [],
      before: new Map(),
    };
    this.svm.setClock(new Clock(BigInt(slot), 0n, 0n, 0n, BigInt(Math.floor(timeMs / 1000))));
  }

  private advanceCommitments(): void {
    const n = this.sealed.length;
    const confirmed = this.sealed[Math.max(0, n - this.options.confirmedLag)].slot;
    const finalized = this.sealed[Math.max(0, n - this.options.finalizedLag)].slot;
    this.finalized = Math.max(this.finalized, finalized);
    this.confirmed = Math.max(this.finalized, this.confirmed, confirmed);
    // Final blocks can no longer be rolled back or read before: their before-images go.
    for (let i = this.firstAtOrAfter(this.finalized); i >= 0 && this.sealed[i]?.before; i--) this.sealed[i].before = null;
  }

  /** Blocks after a slot, oldest first, the head last. */
  private *after(slot: number): Generator<Block> {
    let i = this.sealed.length;
    while (i > 0 && this.sealed[i - 1].slot > slot) i--;
    for (; i < this.sealed.length; i++) yield this.sealed[i];
    if (this.headBlock.slot > slot) yield this.headBlock;
  }

  private tokenBalances(accounts: (MaybeEncodedAccount | undefined)[]): TokenBalance[] {
    const out: TokenBalance[] = [];
    for (const [i, a] of accounts.entries()) {
      if (!a || !a.exists || !isTokenAccount(a)) continue;
      const data = new Uint8Array(a.data);
      const mint = addressDecoder.decode(data.subarray(0, 32));
      const mintAccount = this.svm.getAccount(mint);
      if (!mintAccount.exists || mintAccount.data.length < 82) continue;
      out.push({
        accountIndex: i,
        mint,
        owner: addressDecoder.decode(data.subarray(32, 64)),
        programId: a.programAddress,
        amount: new DataView(data.buffer, data.byteOffset + 64, 8).getBigUint64(0, true),
        decimals: (mintAccount.data as Uint8Array)[44],
      });
    }
    return out;
  }
}
