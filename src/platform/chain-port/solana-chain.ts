/**
 * The chain port for Solana, over @solana/kit and any Solana JSON-RPC endpoint (Keel's sandbox
 * network or a real cluster): SOL and SPL token (Token and Token-2022) balances, incoming transfers
 * read from blocks (pre/post balances and token balances, so transfers made by programs count too),
 * fees (5,000 lamports a signature, a priority fee over a simulated compute-unit limit, and the rent
 * of a recipient's associated token account when it must be created), transfers whose blockhash
 * expiry is handled without paying twice (chain-port.ts: sendOnce), and what a finalized transfer
 * actually cost its sender, read from the transaction.
 */
import {
  Address,
  Blockhash,
  Instruction,
  Rpc,
  SolanaRpcApi,
  TransactionSigner,
  address,
  appendTransactionMessageInstructions,
  createNoopSigner,
  createDefaultRpcTransport,
  createTransactionMessage,
  getBase64Encoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  isAddress,
  isSolanaError,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  Signature,
  Slot,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_CLEANED_UP,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_HISTORY_NOT_AVAILABLE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  SOLANA_ERROR__TRANSACTION__FAILED_WHEN_SIMULATING_TO_ESTIMATE_COMPUTE_LIMIT,
  Commitment,
  RpcTransport,
  createSolanaRpcFromTransport,
  getAddressDecoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  decompileTransactionMessage,
} from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS, SystemInstruction, getTransferSolInstruction, getTransferSolInstructionDataDecoder } from '@solana-program/system';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';
import { estimateComputeUnitLimitFactory, getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { createHash } from 'node:crypto';
import { quoted } from '../chain/json-rpc';
import { solanaErrorText } from './solana-error-text';
import { RecipientRefused, TransferRefused, type BlockAt, type ChainAsset, type ChainPort, type ChainTransfer, type FeeEstimate, type Finality, type PreparedTransfer, type ScanWatch, type ScannedRange, type TransferOutcome, type TransferRequest } from './chain-port';
import { SplTokenFacts, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, decodeMetaplexMetadata, decodeMint, decodeTokenAccount, metaplexMetadataAddress } from './spl-token-facts';

export { TOKEN_2022_PROGRAM, TOKEN_PROGRAM, type SplTokenFacts };

const LAMPORTS_PER_SIGNATURE = 5000n;
const TOKEN_ACCOUNT_SIZE = 165n;
/** Headroom over the simulated compute units (a transfer's cost varies little; an account creation's not at all). */
const COMPUTE_HEADROOM = 1.2;
/** What an ordinary system account must hold to exist (rent-exempt minimum for no data), asked once. */
const NO_DATA = 0n;
const PLACEHOLDER_BLOCKHASH = { blockhash: '11111111111111111111111111111111' as Blockhash, lastValidBlockHeight: 0n };

/** Blocks a blockhash stays valid for (a transaction's lastValidBlockHeight is its blockhash's height plus this). */
const MAX_PROCESSING_AGE = 150;
/**
 * Slots behind its finalized slot for which a node's status cache surely holds every signature: it
 * keeps the last 300 rooted slots' (Agave's MAX_CACHE_ENTRIES), with or without transaction history.
 */
const STATUS_CACHE_SLOTS = 250;
/** Finalized transactions' costs kept (the oldest forgotten first). */
const COSTS_KEPT = 1000;

type TransferCost = NonNullable<Extract<TransferOutcome, { state: 'landed' }>['cost']>;

const COMMITMENT: Record<Finality, Commitment> = { seen: 'processed', confirmed: 'confirmed', final: 'finalized' };

export interface SolanaChainOptions {
  rpcUrl: string;
  /** Requests go through this instead of plain HTTP to rpcUrl (a caller's URL through the guarded connector). */
  transport?: RpcTransport;
  /**
   * Priority fee in micro-lamports per compute unit. Absent: the median of the non-zero fees the
   * cluster reports for the accounts written (getRecentPrioritizationFees), at least `minPriorityMicroLamports`.
   */
  priorityMicroLamports?: bigint;
  minPriorityMicroLamports?: bigint;
}

interface RpcBlockTransaction {
  transaction: { signatures: string[]; message: { accountKeys: string[] } };
  meta: {
    err: unknown;
    fee?: bigint;
    preBalances: bigint[];
    postBalances: bigint[];
    preTokenBalances?: RpcTokenBalance[];
    postTokenBalances?: RpcTokenBalance[];
    loadedAddresses?: { writable: string[]; readonly: string[] };
  } | null;
}
interface RpcTokenBalance {
  accountIndex: number;
  mint: string;
  owner?: string;
  uiTokenAmount: { amount: string };
}

export class SolanaChain implements ChainPort<TransactionSigner> {
  readonly family = 'solana' as const;
  readonly rpc: Rpc<SolanaRpcApi>;
  private readonly tokenPrograms = new Map<string, Address>();
  /** Costs of finalized transactions, which cannot change: a sender asks outcome() twice in a step (sendOnce, then itself). */
  private readonly costs = new Map<string, TransferCost>();
  private readonly estimateUnits: ReturnType<typeof estimateComputeUnitLimitFactory>;

  constructor(private readonly options: SolanaChainOptions) {
    const transport = options.transport ?? createDefaultRpcTransport({ url: options.rpcUrl });
    this.rpc = createSolanaRpcFromTransport(quotingNode(transport, options.rpcUrl)) as Rpc<SolanaRpcApi>;
    this.estimateUnits = estimateComputeUnitLimitFactory({ rpc: this.rpc });
  }

  isAddress(value: string): boolean {
    return isAddress(value);
  }

  async height(finality: Finality): Promise<number> {
    return Number(await this.rpc.getSlot({ commitment: COMMITMENT[finality] }).send());
  }

  async balance(owner: string, asset: ChainAsset, finality: Finality = 'confirmed'): Promise<bigint> {
    const commitment = COMMITMENT[finality];
    if (asset.kind === 'native') return (await this.rpc.getBalance(address(owner), { commitment }).send()).value;
    if (asset.kind === 'nft') return 0n; // no NFT collections are served on Solana
    // Every token account of the owner for the mint (its associated one and any other), Token or Token-2022.
    const { value } = await this.rpc.getTokenAccountsByOwner(address(owner), { mint: address(asset.address) }, { encoding: 'base64', commitment }).send();
    return value.reduce((sum, a) => sum + tokenAccount(a.account.data[0]).amount, 0n);
  }

  /**
   * What the owner can send of an asset: its SOL, or what its associated token account of the mint
   * holds. A transfer moves a token from that account only (plan()); the owner's other token
   * accounts of the mint (anyone can open one for any owner) count in `balance` but are not sent from.
   */
  async sendable(owner: string, asset: ChainAsset, finality: Finality = 'confirmed'): Promise<bigint> {
    if (asset.kind !== 'token') return this.balance(owner, asset, finality);
    const mint = address(asset.address);
    const [associated] = await findAssociatedTokenPda({ owner: address(owner), mint, tokenProgram: await this.tokenProgramOf(mint) });
    const { value } = await this.rpc.getAccountInfo(associated, { encoding: 'base64', commitment: COMMITMENT[finality] }).send();
    return value ? tokenAccount(value.data[0]).amount : 0n;
  }

  /** Every mint the owner holds a token account of (Token and Token-2022), with the sum over its accounts of that mint (0 for empty ones). */
  async heldTokens(owner: string, finality: Finality = 'confirmed'): Promise<Map<string, bigint>> {
    const commitment = COMMITMENT[finality];
    const held = new Map<string, bigint>();
    const byProgram = await Promise.all(
      [TOKEN_PROGRAM, TOKEN_2022_PROGRAM].map((programId) => this.rpc.getTokenAccountsByOwner(address(owner), { programId }, { encoding: 'base64', commitment }).send()),
    );
    for (const { value } of byProgram) {
      for (const a of value) {
        const { mint, amount } = tokenAccount(a.account.data[0]);
        if (mint) held.set(mint, (held.get(mint) ?? 0n) + amount);
      }
    }
    return held;
  }

  /**
   * Decimals, name and symbol of SPL mints (spl-token-facts.ts: the Token-2022 metadata extension,
   * else the Metaplex metadata account, else empty strings); null for an address that is not a mint.
   */
  async tokenFacts(mints: readonly string[]): Promise<(SplTokenFacts | null)[]> {
    const decoded = (await this.accounts(mints)).map((a) => (a ? decodeMint(a.owner, a.data) : null));
    const lacking = decoded.flatMap((d, i) => (d && !d.metadata ? [i] : []));
    const metaplex = await this.accounts(await Promise.all(lacking.map((i) => metaplexMetadataAddress(mints[i]))));
    lacking.forEach((i, j) => {
      const a = metaplex[j];
      const metadata = a ? decodeMetaplexMetadata(a.owner, a.data) : undefined;
      if (metadata) decoded[i]!.metadata = metadata;
    });
    return decoded.map((d) => (d ? { decimals: d.decimals, name: d.metadata?.name ?? '', symbol: d.metadata?.symbol ?? '' } : null));
  }

  /** The cluster's genesis hash: what tells one cluster from another. */
  async genesisHash(): Promise<string> {
    return this.rpc.getGenesisHash().send();
  }

  /** Accounts at `confirmed` (owner and data; null where none), up to 100 a request. */
  private async accounts(addresses: readonly string[]): Promise<({ owner: string; data: Uint8Array } | null)[]> {
    const out: ({ owner: string; data: Uint8Array } | null)[] = [];
    for (let i = 0; i < addresses.length; i += 100) {
      const { value } = await this.rpc.getMultipleAccounts(addresses.slice(i, i + 100).map((a) => address(a)), { encoding: 'base64', commitment: 'confirmed' }).send();
      out.push(...value.map((a) => (a ? { owner: a.owner, data: new Uint8Array(fromBase64.encode(a.data[0])) } : null)));
    }
    return out;
  }

  /** Incoming transfers only, read from every mint's balance changes (watch.tokens and watch.nfts are not needed). */
  async scan(from: number, to: number, watch: ScanWatch, finality: Finality): Promise<ScannedRange> {
    const watched = watch.addresses;
    const commitment = finality === 'final' ? 'finalized' : 'confirmed';
    const slots = await this.rpc.getBlocks(BigInt(from), BigInt(to), { commitment }).send();
    const out: ScannedRange = { transfers: [], blocks: [] };
    for (const slot of slots) {
      const block = await this.rpc
        .getBlock(slot, { commitment, encoding: 'json', transactionDetails: 'full', maxSupportedTransactionVersion: 0, rewards: false })
        .send();
      if (!block) continue;
      const height = Number(slot);
      const timestamp = Number(block.blockTime ?? 0);
      out.blocks.push({ height, hash: block.blockhash, parentHash: null, timestamp });
      for (const tx of block.transactions as unknown as RpcBlockTransaction[]) {
        out.transfers.push(...incomingOf(tx, watched, { height, blockHash: block.blockhash, timestamp }));
      }
    }
    return out;
  }

  async blockHash(height: number, finality: Finality): Promise<string | null> {
    const block = await noBlockAsNull(
      this.rpc.getBlock(BigInt(height), { commitment: finality === 'final' ? 'finalized' : 'confirmed', transactionDetails: 'none', rewards: false }).send(),
    );
    return block?.blockhash ?? null;
  }

  /**
   * A slot without a block is `none` only on the answering node's own word that the slot was skipped
   * or rolled back below its root (-32007, -32009); a slot above its root (-32004: not available),
   * or one its ledger no longer keeps (-32001: cleaned up), is `unknown`. The node's height is not
   * read apart: behind a load balancer it could come from another node than the block.
   */
  async blockAt(height: number, finality: Finality): Promise<BlockAt> {
    try {
      const block = await this.rpc.getBlock(BigInt(height), { commitment: finality === 'final' ? 'finalized' : 'confirmed', transactionDetails: 'none', rewards: false }).send();
      return block ? { hash: block.blockhash } : 'unknown';
    } catch (e) {
      if (isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED) || isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED)) return 'none';
      if (isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE) || isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_CLEANED_UP)) return 'unknown';
      throw e;
    }
  }

  async blockTime(height: number): Promise<number | null> {
    const time = await noBlockAsNull(this.rpc.getBlockTime(BigInt(height)).send());
    return time === null ? null : Number(time);
  }

  async estimateTransfer(from: string, request: TransferRequest): Promise<FeeEstimate> {
    return (await this.plan(createNoopSigner(address(from)), request)).fee;
  }

  async prepareTransfer(payer: TransactionSigner, request: TransferRequest): Promise<PreparedTransfer> {
    const plan = await this.plan(payer, request);
    return this.prepareInstructions(payer, plan.instructions, plan.fee);
  }

  /** One transaction of `instructions`, its fee paid by `payer` (every signer the instructions name signs it), on the latest blockhash: ready to broadcast. */
  async prepareInstructions(payer: TransactionSigner, instructions: Instruction[], fee: FeeEstimate): Promise<PreparedTransfer> {
    const { context, value: latest } = await this.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const tx = await signTransactionMessageWithSigners(message);
    return { txId: getSignatureFromTransaction(tx), raw: getBase64EncodedWireTransaction(tx), validThrough: Number(latest.lastValidBlockHeight), validFrom: Number(context.slot), nonce: null, fee };
  }

  async broadcast(prepared: PreparedTransfer): Promise<void> {
    try {
      await this.rpc.sendTransaction(prepared.raw as never, { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
    } catch (e) {
      if (!isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) throw e;
      const cause = (e as { cause?: unknown }).cause;
      // Landed already, or too late to land: what became of it is for outcome() to say.
      if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED) || isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)) return;
      throw new TransferRefused(`the transfer was refused before it could land: ${this.nodeWords(solanaErrorText(cause ?? e))}`);
    }
  }

  /**
   * Behind a load balancer every request may reach another node, one of them lagging: a signature
   * "not found" shows that a transaction never landed only on the word of a node that had reached the
   * finalized slot past the transaction's validity. So the finalized slot and block height are read
   * first, together (one answer, one node), and the status answer's own slot (its context) must reach
   * that slot; else it is `pending`, and a later step asks again (sending the same transaction again is
   * harmless; preparing a new one could pay twice).
   */
  async outcome(prepared: PreparedTransfer): Promise<TransferOutcome> {
    const final = await this.rpc.getEpochInfo({ commitment: 'finalized' }).send();
    const { context, value } = await this.rpc.getSignatureStatuses([prepared.txId as Signature], { searchTransactionHistory: true }).send();
    const status = value[0];
    if (status) {
      const finality: Finality = status.confirmationStatus === 'finalized' ? 'final' : status.confirmationStatus === 'confirmed' ? 'confirmed' : 'seen';
      const landed: TransferOutcome = { state: 'landed', height: Number(status.slot), finality, failed: status.err !== null, ...(status.err !== null ? { error: this.nodeWords(JSON.stringify(status.err, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) } : {}) };
      const cost = finality === 'final' ? await this.costOf(prepared) : undefined;
      return cost ? { ...landed, cost } : landed;
    }
    // The finalized block at `root` is past the last valid block height: every slot the transaction could land in is below it.
    if (prepared.validThrough === null || Number(final.blockHeight) <= prepared.validThrough) return { state: 'pending' };
    const root = Number(final.absoluteSlot);
    if (Number(context.slot) < root) return { state: 'pending' };
    return this.absence(prepared, prepared.validThrough, root, Number(context.slot));
  }

  /**
   * What a signature not found means once its transaction can no longer land: `expired` when the
   * node can show it never landed, its status cache still covering every slot it could have landed
   * in, or its transaction history (which getSignatureStatuses searched) reaching back to them;
   * else `undetermined`. A node without history answers "not found" for a landed transaction as soon
   * as its status cache forgets it (a worker down for minutes, a pruned ledger), and a replacement
   * would pay twice. `root` is the finalized slot past the transaction's validity, `seenAt` the slot
   * the status was read at (at or above it, and above the answering node's own root, from which its
   * status cache reaches back). A node asked next that is behind `root` is no witness: `pending`.
   */
  private async absence(prepared: PreparedTransfer, validThrough: number, root: number, seenAt: number): Promise<TransferOutcome> {
    // A block's slot is never below its height: a lower bound for a line recorded without its slot.
    const from = prepared.validFrom ?? Math.max(0, validThrough - MAX_PROCESSING_AGE);
    if (seenAt - from <= STATUS_CACHE_SLOTS) return { state: 'expired' };
    const firstKept = Number(await this.rpc.getFirstAvailableBlock().send());
    let served = true;
    try {
      if (firstKept <= from) served = await this.servesHistory(prepared, root);
    } catch (e) {
      if (isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED)) return { state: 'pending' };
      throw e;
    }
    if (firstKept <= from && served) return { state: 'expired' };
    const missing = served ? `its ledger begins at slot ${firstKept}` : 'it does not serve transaction history';
    return {
      state: 'undetermined',
      reason: `the node cannot show whether transaction ${prepared.txId} landed: its blockhash is of slot ${from}, ${missing}, and its status cache no longer reaches that slot; point the cluster's RPC at a node whose transaction history does (the transfer is neither sent again nor replaced until then)`,
    };
  }

  /** Whether the node serves transaction history (asked of the transaction's fee payer; a node without it refuses). */
  private async servesHistory(prepared: PreparedTransfer, root: number): Promise<boolean> {
    try {
      await this.rpc.getSignaturesForAddress(feePayerOf(prepared.raw), { limit: 1, commitment: 'finalized', minContextSlot: BigInt(root) as Slot }).send();
      return true;
    } catch (e) {
      if (isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_HISTORY_NOT_AVAILABLE)) return false;
      throw e;
    }
  }

  /**
   * What a finalized transaction cost its fee payer (the first account): its fee, and the rent of the
   * accounts it created, which is what the payer lost beyond the fee and the SOL it sent. Not the
   * prepared estimate: an idempotent token account creation another transaction got to first costs
   * nothing, and the fee is what was charged. A failed transaction paid its fee only. Undefined while
   * the node cannot serve the transaction at finalized.
   */
  private async costOf(prepared: PreparedTransfer): Promise<TransferCost | undefined> {
    const known = this.costs.get(prepared.txId);
    if (known) return known;
    const tx = await this.rpc
      .getTransaction(prepared.txId as Signature, { commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0 })
      .send()
      .catch((e: unknown) => {
        if (isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_HISTORY_NOT_AVAILABLE)) return null;
        throw e;
      });
    if (!tx?.meta) return undefined;
    const fee = BigInt(tx.meta.fee);
    const lost = BigInt(tx.meta.preBalances[0]) - BigInt(tx.meta.postBalances[0]);
    const cost = { fee, accountCreation: tx.meta.err !== null ? 0n : lost - fee - solSentByPayer(prepared.raw) };
    if (this.costs.size >= COSTS_KEPT) this.costs.delete(this.costs.keys().next().value!);
    this.costs.set(prepared.txId, cost);
    return cost;
  }

  /** The instructions of a transfer and what it costs, for a payer (a real signer, or a no-op one to estimate). */
  private async plan(payer: TransactionSigner, request: TransferRequest): Promise<{ instructions: Instruction[]; fee: FeeEstimate }> {
    if (request.amount <= 0n) throw new Error('a transfer amount must be positive');
    if (request.asset.kind === 'nft') throw new TransferRefused('NFT collections are not served on Solana');
    const to = address(request.to);
    const transfer: Instruction[] = [];
    let accountCreation = 0n;
    const written: Address[] = [payer.address, to];
    if (request.asset.kind === 'native') {
      transfer.push(getTransferSolInstruction({ source: payer, destination: to, amount: request.amount }));
      const existing = (await this.rpc.getBalance(to, { commitment: 'confirmed' }).send()).value;
      const minimum = await this.rpc.getMinimumBalanceForRentExemption(NO_DATA).send();
      if (existing === 0n && request.amount < minimum) throw new TransferRefused(`a new Solana account needs at least ${minimum} lamports`);
    } else {
      const mint = address(request.asset.address);
      const tokenProgram = await this.tokenProgramOf(mint);
      const [source] = await findAssociatedTokenPda({ owner: payer.address, mint, tokenProgram });
      const { account: destination, create } = await this.tokenDestination(payer.address, to, mint, tokenProgram);
      if (create) {
        // The recipient's associated token account is created in the same transaction, its rent paid by the sender.
        const size = tokenProgram === TOKEN_PROGRAM ? TOKEN_ACCOUNT_SIZE : TOKEN_ACCOUNT_SIZE + 5n; // Token-2022 adds ImmutableOwner
        accountCreation = await this.rpc.getMinimumBalanceForRentExemption(size).send();
        transfer.push(getCreateAssociatedTokenIdempotentInstruction({ payer, ata: destination, owner: to, mint, tokenProgram }));
      }
      transfer.push(getTransferCheckedInstruction({ source, mint, destination, authority: payer, amount: request.amount, decimals: request.asset.decimals }, { programAddress: tokenProgram }));
      written.push(source, destination);
    }
    const price = await this.priorityFee(written);
    const probe = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(PLACEHOLDER_BLOCKHASH, m),
      (m) => appendTransactionMessageInstructions([getSetComputeUnitPriceInstruction({ microLamports: price }), ...transfer], m),
    );
    let simulated: number;
    try {
      simulated = await this.estimateUnits(probe);
    } catch (e) {
      if (!isSolanaError(e, SOLANA_ERROR__TRANSACTION__FAILED_WHEN_SIMULATING_TO_ESTIMATE_COMPUTE_LIMIT)) throw e;
      // The transfer fails as things stand (funds short, account frozen, ...): refused, nothing sent.
      throw new TransferRefused(`the transfer would fail: ${this.nodeWords(solanaErrorText((e as { cause?: unknown }).cause ?? e))}`);
    }
    const units = Math.ceil(simulated * COMPUTE_HEADROOM);
    const instructions = [getSetComputeUnitLimitInstruction({ units }), getSetComputeUnitPriceInstruction({ microLamports: price }), ...transfer];
    const fee = LAMPORTS_PER_SIGNATURE + (price * BigInt(units) + 999_999n) / 1_000_000n;
    return { instructions, fee: { fee, accountCreation, nativeNeeded: (request.asset.kind === 'native' ? request.amount : 0n) + fee + accountCreation, units: BigInt(units) } };
  }

  /**
   * Where a token transfer to `to` goes: `to` itself when it is a token account of the mint (as
   * wallets do), else the associated token account of `to` as a wallet (`create`: it has none yet).
   * Any other account of a token program (a mint, a token account of another mint, a multisig) is
   * refused: an associated token account made for it would be owned by an address no one signs for,
   * and the tokens lost. So is a token account of the sender itself: nothing would move. An address
   * of no token program (a wallet, a program-derived vault) is a wallet.
   */
  private async tokenDestination(from: Address, to: Address, mint: Address, tokenProgram: Address): Promise<{ account: Address; create: boolean }> {
    const [associated] = await findAssociatedTokenPda({ owner: to, mint, tokenProgram });
    const [recipient, existing] = await this.accounts([to, associated]);
    if (!recipient || (recipient.owner !== TOKEN_PROGRAM && recipient.owner !== TOKEN_2022_PROGRAM)) return { account: associated, create: !existing };
    const held = decodeTokenAccount(recipient.owner, recipient.data);
    if (!held || held.mint !== mint) throw new RecipientRefused(`${to} is an account of the token program that is not a wallet nor a token account of ${mint} (a mint, or a token account of another mint): tokens sent to it would be lost`);
    if (held.owner === from) throw new RecipientRefused(`${to} is a token account of the sending address itself: such a transfer moves nothing`);
    return { account: to, create: false };
  }

  /**
   * Text the node had a say in (a transaction error it named, kept in a refusal or a line's error)
   * with what of its URL it echoes cut out (json-rpc.ts: quoted): its path or query may hold a key.
   */
  private nodeWords(text: string): string {
    return quoted(text, this.options.rpcUrl);
  }

  private async priorityFee(written: Address[]): Promise<bigint> {
    if (this.options.priorityMicroLamports !== undefined) return this.options.priorityMicroLamports;
    const floor = this.options.minPriorityMicroLamports ?? 0n;
    const recent = await this.rpc.getRecentPrioritizationFees(written).send();
    const fees = recent.map((r) => BigInt(r.prioritizationFee)).filter((f) => f > 0n).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const median = fees.length ? fees[Math.floor(fees.length / 2)] : 0n;
    return median > floor ? median : floor;
  }

  private async tokenProgramOf(mint: Address): Promise<Address> {
    const known = this.tokenPrograms.get(mint);
    if (known) return known;
    const { value } = await this.rpc.getAccountInfo(mint, { encoding: 'base64', commitment: 'confirmed' }).send();
    if (!value || (value.owner !== TOKEN_PROGRAM && value.owner !== TOKEN_2022_PROGRAM)) throw new TransferRefused(`${mint} is not a token mint`);
    this.tokenPrograms.set(mint, value.owner);
    return value.owner;
  }
}

const fromBase64 = getBase64Encoder();

/**
 * The node's answers with a JSON-RPC error's message (its own words, which @solana/kit puts in the
 * errors it throws: logged, or shown in a refusal) quoted as json-rpc.ts quotes a node: any URL cut
 * to its origin, and its own URL's path and query cut wherever they appear ("Cannot POST /v2/<key>").
 */
function quotingNode(transport: RpcTransport, rpcUrl: string): RpcTransport {
  const cut = (answer: unknown): unknown => {
    const error = (answer as { error?: { message?: unknown } } | null)?.error;
    return error && typeof error.message === 'string' ? { ...(answer as object), error: { ...error, message: quoted(error.message, rpcUrl) } } : answer;
  };
  return (async (config: Parameters<RpcTransport>[0]) => {
    const answer: unknown = await transport(config);
    return Array.isArray(answer) ? answer.map(cut) : cut(answer);
  }) as RpcTransport;
}
const addressDecoder = getAddressDecoder();

/** A read of a slot's block: null when the slot was skipped, rolled back or is not there (yet). */
async function noBlockAsNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (e) {
    if (
      isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED) ||
      isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE) ||
      isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED)
    ) {
      return null;
    }
    throw e;
  }
}

const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
const transferSolData = getTransferSolInstructionDataDecoder();

/** The SOL a signed transaction (base64) sends from its fee payer to other accounts by System transfers. */
function decodedMessage(raw: string) {
  return decompileTransactionMessage(messageDecoder.decode(transactionDecoder.decode(fromBase64.encode(raw)).messageBytes));
}

function feePayerOf(raw: string): Address {
  return decodedMessage(raw).feePayer.address;
}

function solSentByPayer(raw: string): bigint {
  const message = decodedMessage(raw);
  const payer = message.feePayer.address;
  let sent = 0n;
  for (const ix of message.instructions) {
    const [source, destination] = ix.accounts ?? [];
    // A TransferSol's data: its u32 discriminator and the u64 amount.
    if (ix.programAddress !== SYSTEM_PROGRAM_ADDRESS || ix.data?.length !== 12 || source?.address !== payer || destination?.address === payer) continue;
    const data = transferSolData.decode(ix.data);
    if (data.discriminator === SystemInstruction.TransferSol) sent += data.amount;
  }
  return sent;
}

/** The mint and amount of a token account (Token or Token-2022: the same first 165 bytes) from its base64 data. */
function tokenAccount(base64: string): { mint: string; amount: bigint } {
  const data = new Uint8Array(fromBase64.encode(base64));
  if (data.length < 72) return { mint: '', amount: 0n };
  return { mint: addressDecoder.decode(data.subarray(0, 32)), amount: new DataView(data.buffer, data.byteOffset + 64, 8).getBigUint64(0, true) };
}

/**
 * The transfers into watched addresses of one successful transaction, from its balance changes.
 * Every account whose balance of the asset fell in the transaction is a sender of it (a transaction
 * may move one asset out of several accounts, each signing), account by account: what one account
 * of an owner lost is not offset by what another of its accounts gained in the same transaction
 * (else an owner paying from one account while an accomplice tops up another would send nothing).
 * A token account is named by its owner before the transaction for its tokens, and for its SOL (a
 * wrapped-SOL account closed into a deposit address) only when that owner signed the transaction:
 * a token account's SOL is not its owner's (the owner's balance does not count it), and its close
 * authority may be someone else, who closes it without the owner (an outsider hands an account it
 * can close to a watched address, then closes it into an address of its own), so SOL a token
 * account lost in a transaction its owner did not sign is sent by the account itself. `from` is
 * the sender that lost the most, `alsoFrom` the others, most lost first. For SOL the fee is not a transfer: the fee payer's fee
 * counts as its loss only when no account lost SOL beyond fees. A token account handed to another
 * owner in the transaction (SetAuthority, signed by the owner it leaves) left its owner before with
 * all it held, so the owner that signed a transfer out of it stays its sender. SOL that reaches a
 * token account (sent to it, or the rent of one created) is no transfer into its owner: it is not
 * the owner's SOL (its balance does not count it; only closing the account frees it) nor the token's.
 */
export function incomingOf(tx: RpcBlockTransaction, watched: ReadonlySet<string>, at: { height: number; blockHash: string; timestamp: number }): ChainTransfer[] {
  if (!tx.meta || tx.meta.err !== null) return [];
  const meta = tx.meta;
  const keys = [...tx.transaction.message.accountKeys, ...(meta.loadedAddresses?.writable ?? []), ...(meta.loadedAddresses?.readonly ?? [])];
  const txId = tx.transaction.signatures[0];
  const base = { txId, height: at.height, blockHash: at.blockHash, timestamp: at.timestamp };
  const out: ChainTransfer[] = [];
  const pre = new Map((meta.preTokenBalances ?? []).map((b) => [b.accountIndex, b]));
  const post = new Map((meta.postTokenBalances ?? []).map((b) => [b.accountIndex, b]));
  /** A token account's owner before the transaction (else after it, when the node did not say). */
  const ownerBefore = (i: number) => pre.get(i)?.owner || post.get(i)?.owner || '';
  // The signers: the first keys of the message, one a signature (loaded addresses never sign).
  const signers = new Set(tx.transaction.message.accountKeys.slice(0, tx.transaction.signatures.length));
  /** Whose SOL an account's is: a token account's owner's only when the owner signed; else the account's own. */
  const solHolder = (i: number, key: string) => (signers.has(ownerBefore(i)) ? ownerBefore(i) : key);
  const nativeDelta = (i: number) => BigInt(meta.postBalances[i] ?? 0) - BigInt(meta.preBalances[i] ?? 0);
  const solLost = (withFee: boolean) => {
    const lost = new Losses();
    for (const [i, key] of keys.entries()) lost.add(solHolder(i, key), -nativeDelta(i) - (i === 0 && !withFee ? BigInt(meta.fee ?? 0) : 0n));
    return lost;
  };
  const beyondFees = solLost(false);
  const solSenders = senders(beyondFees.any() ? beyondFees : solLost(true));
  for (const [i, key] of keys.entries()) {
    if (!watched.has(key)) continue;
    const delta = nativeDelta(i);
    if (delta <= 0n) continue;
    out.push({ ...base, ...positioned(`native:${key}`), to: key, ...solSenders, asset: { kind: 'native' }, amount: delta });
  }
  /** By mint: what each owner's token accounts lost of it, account by account. */
  const lost = new Map<string, Losses>();
  for (const p of meta.preTokenBalances ?? []) {
    const owner = ownerBefore(p.accountIndex);
    const after = post.get(p.accountIndex);
    // Closed, or handed to another owner: everything it held left its owner before.
    const kept = after && after.mint === p.mint && (after.owner || owner) === owner ? BigInt(after.uiTokenAmount.amount) : 0n;
    (lost.get(p.mint) ?? lost.set(p.mint, new Losses()).get(p.mint)!).add(owner, BigInt(p.uiTokenAmount.amount) - kept);
  }
  // Token balances: by token account; credited to its owner, once per (mint, owner) in the transaction.
  const deltas = new Map<string, { mint: string; owner: string; amount: bigint }>();
  for (const q of meta.postTokenBalances ?? []) {
    const owner = q.owner ?? '';
    const delta = BigInt(q.uiTokenAmount.amount) - BigInt(pre.get(q.accountIndex)?.uiTokenAmount.amount ?? '0');
    if (delta <= 0n || !watched.has(owner)) continue;
    const k = `${q.mint}:${owner}`;
    deltas.set(k, { mint: q.mint, owner, amount: (deltas.get(k)?.amount ?? 0n) + delta });
  }
  for (const [k, d] of deltas) {
    out.push({ ...base, ...positioned(`token:${k}`), to: d.owner, ...senders(lost.get(d.mint) ?? new Losses()), asset: { kind: 'token', address: d.mint }, amount: d.amount });
  }
  return out;
}

/** What each sender lost, adding up only what its accounts lost (a gain offsets nothing), in the order they first lost something. */
class Losses {
  private readonly bySender = new Map<string, bigint>();

  add(sender: string, lost: bigint): void {
    if (sender && lost > 0n) this.bySender.set(sender, (this.bySender.get(sender) ?? 0n) + lost);
  }

  any(): boolean {
    return this.bySender.size > 0;
  }

  entries(): [string, bigint][] {
    return [...this.bySender];
  }
}

/** The senders, the one that lost the most first (the first of equals in transaction order). */
function senders(lost: Losses): { from: string | null; alsoFrom: string[] } {
  const [from = null, ...alsoFrom] = lost
    .entries()
    .sort(([, a], [, b]) => (a > b ? -1 : a < b ? 1 : 0))
    .map(([key]) => key);
  return { from, alsoFrom };
}

/** A position and the index a record keys it by: a 31-bit digest of it, the same on every scan. */
function positioned(position: string): { position: string; index: number; batchIndex: number } {
  return { position, index: createHash('sha256').update(position).digest().readUInt32BE(0) >>> 1, batchIndex: 0 };
}
