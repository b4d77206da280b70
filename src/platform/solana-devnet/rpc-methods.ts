/**
 * The JSON-RPC methods the sandbox Solana network answers, over its ledger, with Solana's shapes
 * and error codes: what a `@solana/kit` client needs for custody (accounts, balances, token
 * accounts, blockhashes, fees, sending and simulating, statuses, blocks and transaction history).
 * Methods not listed answer -32601, as a real node does for what it does not serve.
 */
import {
  Address,
  EncodedAccount,
  MaybeEncodedAccount,
  address,
  getAddressDecoder,
  getBase58Decoder,
  getBase64Encoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  isAddress,
} from '@solana/kit';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from '../chain-port/spl-token-facts';
import { Block, Commitment, CompiledMessage, LandedTransaction, SolanaLedger, TokenBalance, decodeWireTransaction, isTokenAccount } from './ledger';
import type { RpcTransactionError } from './transaction-errors';

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** What the network adds to its ledger's methods: sending (journalled), the faucet and rollback. */
export interface DevnetActions {
  /** Runs a transaction in the head block and journals it; answers the ledger's outcome. */
  submit(wire: Uint8Array): ReturnType<SolanaLedger['execute']>;
  airdrop(to: Address, lamports: bigint): Promise<string>;
  rollback(slot: number): { undone: string[]; head: number };
}

type Params = unknown[];
type Handler = (params: Params) => unknown;

const LAMPORTS_PER_SIGNATURE = 5000n;
/** Rooted slots a node's status cache keeps the signatures of (Agave's MAX_CACHE_ENTRIES). */
const STATUS_CACHE_ROOTS = 300;
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** Programs built into the runtime: their instructions count 3,000 compute units by default, others 200,000. */
const BUILTIN_PROGRAMS = new Set([
  '11111111111111111111111111111111',
  COMPUTE_BUDGET_PROGRAM,
  'Vote111111111111111111111111111111111111111',
  'Stake11111111111111111111111111111111111111',
  'Config1111111111111111111111111111111111111',
  'AddressLookupTab1e1111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoader1111111111111111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
]);
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000n;

const b58 = getBase58Decoder();
const fromB58 = getBase58Encoder();
const fromB64 = getBase64Encoder();
const addressDecoder = getAddressDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();


function config(params: Params, index: number): Record<string, unknown> {
  const c = params[index];
  if (c === undefined || c === null) return {};
  if (typeof c !== 'object' || Array.isArray(c)) throw new RpcError(-32602, `Invalid params: configuration at position ${index} must be an object`);
  return c as Record<string, unknown>;
}

function commitmentOf(c: Record<string, unknown>, fallback: Commitment = 'finalized'): Commitment {
  const v = c.commitment ?? fallback;
  if (v !== 'processed' && v !== 'confirmed' && v !== 'finalized') throw new RpcError(-32602, `Invalid params: unknown commitment ${String(v)}`);
  return v;
}

function addressParam(params: Params, index: number): Address {
  const v = params[index];
  if (typeof v !== 'string' || !isAddress(v)) throw new RpcError(-32602, 'Invalid param: Invalid');
  return address(v);
}

function slotParam(v: unknown, what = 'slot'): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new RpcError(-32602, `Invalid params: ${what} must be a non-negative integer`);
  return v;
}

function bytesParam(v: unknown, encoding: unknown, fallback: 'base58' | 'base64'): Uint8Array {
  if (typeof v !== 'string') throw new RpcError(-32602, 'Invalid params: expected an encoded string');
  const enc = encoding ?? fallback;
  try {
    if (enc === 'base64') return new Uint8Array(fromB64.encode(v));
    if (enc === 'base58') return new Uint8Array(fromB58.encode(v));
  } catch {
    throw new RpcError(-32602, `Invalid params: invalid ${String(enc)} encoding`);
  }
  throw new RpcError(-32602, `Invalid params: unsupported encoding ${String(enc)}`);
}

function uiAmount(amount: bigint, decimals: number): { amount: string; decimals: number; uiAmount: number; uiAmountString: string } {
  const s = amount.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = decimals ? s.slice(s.length - decimals).replace(/0+$/, '') : '';
  const uiAmountString = frac ? `${whole}.${frac}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

function tokenBalanceJson(t: TokenBalance): unknown {
  return { accountIndex: t.accountIndex, mint: t.mint, owner: t.owner, programId: t.programId, uiTokenAmount: uiAmount(t.amount, t.decimals) };
}

/** Compute-budget settings of a message: its unit price (micro-lamports) and unit limit. */
export function computeBudget(message: CompiledMessage): { price: bigint; limit: bigint } {
  let price = 0n;
  let limit: bigint | undefined;
  let defaultLimit = 0n;
  for (const ix of message.instructions) {
    const program = message.staticAccounts[ix.programAddressIndex];
    defaultLimit += BUILTIN_PROGRAMS.has(program) ? 3_000n : 200_000n;
    if (program !== COMPUTE_BUDGET_PROGRAM || !ix.data || ix.data.length < 1) continue;
    const view = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength);
    if (ix.data[0] === 2 && ix.data.length >= 5) limit = BigInt(view.getUint32(1, true));
    if (ix.data[0] === 3 && ix.data.length >= 9) price = view.getBigUint64(1, true);
  }
  const units = limit ?? defaultLimit;
  return { price, limit: units > MAX_COMPUTE_UNIT_LIMIT ? MAX_COMPUTE_UNIT_LIMIT : units };
}

/** What a message pays: 5,000 lamports a signature and its priority fee (price × limit, rounded up). */
export function messageFee(message: CompiledMessage): bigint {
  const { price, limit } = computeBudget(message);
  return LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts) + (price * limit + 999_999n) / 1_000_000n;
}

export function createRpcMethods(ledger: SolanaLedger, actions: DevnetActions, version: string): Map<string, Handler> {
  const context = (commitment: Commitment) => ({ slot: ledger.slot(commitment), apiVersion: version });
  const withContext = (commitment: Commitment, value: unknown) => ({ context: context(commitment), value });

  const checkMinContextSlot = (c: Record<string, unknown>, commitment: Commitment) => {
    if (c.minContextSlot === undefined) return;
    const min = slotParam(c.minContextSlot, 'minContextSlot');
    const slot = ledger.slot(commitment);
    if (slot < min) throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: slot });
  };

  const accountJson = (a: MaybeEncodedAccount | EncodedAccount, encoding: unknown): unknown => {
    if ('exists' in a && !a.exists) return null;
    const acc = a as EncodedAccount;
    const data = acc.data as Uint8Array;
    const base = { executable: acc.executable, lamports: BigInt(acc.lamports), owner: acc.programAddress, rentEpoch: 18446744073709551615n, space: data.length };
    const enc = encoding ?? 'base58';
    if (enc === 'jsonParsed') {
      const parsed = parseTokenAccount(acc);
      if (parsed) return { ...base, data: parsed };
      return { ...base, data: [Buffer.from(data).toString('base64'), 'base64'] };
    }
    if (enc === 'base64') return { ...base, data: [Buffer.from(data).toString('base64'), 'base64'] };
    if (enc === 'base58') return { ...base, data: [b58.decode(data), 'base58'] };
    throw new RpcError(-32602, `Invalid params: unsupported encoding ${String(enc)}`);
  };

  const parseTokenAccount = (acc: EncodedAccount): unknown => {
    const data = acc.data as Uint8Array;
    if (!isTokenAccount(acc)) return undefined;
    const mint = addressDecoder.decode(data.subarray(0, 32));
    const mintAccount = ledger.svm.getAccount(mint);
    const decimals = mintAccount.exists ? (mintAccount.data as Uint8Array)[44] : 0;
    const amount = new DataView(data.buffer, data.byteOffset + 64, 8).getBigUint64(0, true);
    const state = ['uninitialized', 'initialized', 'frozen'][data[108]] ?? 'uninitialized';
    return {
      program: acc.programAddress === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022',
      parsed: { type: 'account', info: { isNative: data[109] === 1, mint, owner: addressDecoder.decode(data.subarray(32, 64)), state, tokenAmount: uiAmount(amount, decimals) } },
      space: data.length,
    };
  };

  const transactionJson = (tx: LandedTransaction, encoding: unknown, maxVersion: unknown): unknown => {
    const version = tx.message.version;
    if (version !== 'legacy' && (maxVersion === undefined || maxVersion === null || (maxVersion as number) < version)) {
      throw new RpcError(-32015, `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`);
    }
    const meta = {
      err: tx.err,
      status: tx.err === null ? { Ok: null } : { Err: tx.err },
      fee: tx.fee,
      preBalances: tx.preBalances,
      postBalances: tx.postBalances,
      innerInstructions: [],
      logMessages: tx.logs,
      preTokenBalances: tx.preTokenBalances.map(tokenBalanceJson),
      postTokenBalances: tx.postTokenBalances.map(tokenBalanceJson),
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: tx.computeUnitsConsumed,
    };
    const enc = encoding ?? 'json';
    let transaction: unknown;
    if (enc === 'base64') transaction = [Buffer.from(tx.wire).toString('base64'), 'base64'];
    else if (enc === 'base58') transaction = [b58.decode(tx.wire), 'base58'];
    else if (enc === 'json') {
      const { transaction: decoded } = decodeWireTransaction(tx.wire);
      const m = tx.message;
      transaction = {
        signatures: Object.values(decoded.signatures).map((s) => (s ? b58.decode(s) : '1111111111111111111111111111111111111111111111111111111111111111')),
        message: {
          accountKeys: m.staticAccounts,
          header: { numRequiredSignatures: m.header.numSignerAccounts, numReadonlySignedAccounts: m.header.numReadonlySignerAccounts, numReadonlyUnsignedAccounts: m.header.numReadonlyNonSignerAccounts },
          recentBlockhash: m.lifetimeToken,
          instructions: m.instructions.map((ix) => ({ programIdIndex: ix.programAddressIndex, accounts: ix.accountIndices ?? [], data: b58.decode(ix.data ?? new Uint8Array()), stackHeight: null })),
          ...(version === 'legacy' ? {} : { addressTableLookups: [] }),
        },
      };
    } else throw new RpcError(-32602, `Invalid params: unsupported encoding ${String(enc)} (json, base64 and base58 are served)`);
    return { transaction, meta, ...(maxVersion === undefined || maxVersion === null ? {} : { version }) };
  };

  const statusOf = (tx: LandedTransaction): unknown => {
    const finalized = tx.slot <= ledger.slot('finalized');
    const confirmed = tx.slot <= ledger.slot('confirmed');
    const block = tx.slot === ledger.head.slot ? ledger.head : ledger.block(tx.slot, 'processed');
    return {
      slot: tx.slot,
      confirmations: finalized ? null : ledger.head.blockHeight - (block?.blockHeight ?? ledger.head.blockHeight),
      err: tx.err,
      status: tx.err === null ? { Ok: null } : { Err: tx.err },
      confirmationStatus: finalized ? 'finalized' : confirmed ? 'confirmed' : 'processed',
    };
  };

  // What the node keeps, as a real one configures it (keel_setHistory): transaction history served or
  // not, and the first slot its ledger still holds; the status cache always covers the last rooted slots.
  const history = { served: true, firstAvailable: 0 };
  const inStatusCache = (slot: number) => slot > ledger.slot('finalized') - STATUS_CACHE_ROOTS;
  const historyServed = () => {
    if (!history.served) throw new RpcError(-32011, 'Transaction history is not available from this node');
  };
  const blockFor = (slot: number, commitment: Commitment): Block => {
    if (slot < history.firstAvailable) throw new RpcError(-32001, `Block ${slot} cleaned up, does not exist on node. First available block: ${history.firstAvailable}`);
    const block = ledger.block(slot, commitment);
    if (block) return block;
    if (slot > ledger.slot(commitment)) throw new RpcError(-32004, `Block not available for slot ${slot}`);
    throw new RpcError(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
  };

  const blockCommitment = (c: Record<string, unknown>): Commitment => {
    const commitment = commitmentOf(c);
    if (commitment === 'processed') throw new RpcError(-32602, 'Method does not support commitment below `confirmed`');
    return commitment;
  };

  const preflightError = (err: RpcTransactionError, logs: string[], units = 0n): RpcError => {
    if (err === 'SignatureFailure') return new RpcError(-32003, 'Transaction signature verification failure');
    const text: Record<string, string> = { BlockhashNotFound: 'Blockhash not found', AlreadyProcessed: 'This transaction has already been processed', InsufficientFundsForFee: 'Insufficient funds for fee', AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.' };
    const what = typeof err === 'string' ? text[err] ?? err : `Error processing Instruction ${JSON.stringify(err)}`;
    return new RpcError(-32002, `Transaction simulation failed: ${what}`, { err, logs, accounts: null, unitsConsumed: units, returnData: null, innerInstructions: null });
  };

  const methods: Record<string, Handler> = {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': version, 'feature-set': 0 }),
    getGenesisHash: () => ledger.genesisHash,
    getIdentity: () => ({ identity: ledger.genesisHash }),
    getSlot: (p) => {
      const c = config(p, 0);
      const commitment = commitmentOf(c);
      checkMinContextSlot(c, commitment);
      return ledger.slot(commitment);
    },
    getBlockHeight: (p) => {
      const commitment = commitmentOf(config(p, 0));
      return commitment === 'processed' ? ledger.head.blockHeight : ledger.latestBlock(commitment).blockHeight;
    },
    getEpochInfo: (p) => {
      const commitment = commitmentOf(config(p, 0));
      const slot = ledger.slot(commitment);
      const blockHeight = commitment === 'processed' ? ledger.head.blockHeight : ledger.latestBlock(commitment).blockHeight;
      return { absoluteSlot: slot, blockHeight, epoch: 0, slotIndex: slot, slotsInEpoch: 432000, transactionCount: null };
    },
    getLatestBlockhash: (p) => {
      const c = config(p, 0);
      const commitment = commitmentOf(c);
      checkMinContextSlot(c, commitment);
      const block = ledger.latestBlock(commitment);
      return withContext(commitment, { blockhash: block.blockhash, lastValidBlockHeight: block.blockHeight + 150 });
    },
    isBlockhashValid: (p) => {
      const commitment = commitmentOf(config(p, 1));
      if (typeof p[0] !== 'string') throw new RpcError(-32602, 'Invalid params: blockhash');
      return withContext(commitment, ledger.lastValidBlockHeight(p[0]) !== undefined);
    },
    getBalance: (p) => {
      const c = config(p, 1);
      const commitment = commitmentOf(c);
      checkMinContextSlot(c, commitment);
      const a = ledger.account(addressParam(p, 0), commitment);
      return withContext(commitment, a.exists ? BigInt(a.lamports) : 0n);
    },
    getAccountInfo: (p) => {
      const c = config(p, 1);
      const commitment = commitmentOf(c);
      checkMinContextSlot(c, commitment);
      return withContext(commitment, accountJson(ledger.account(addressParam(p, 0), commitment), c.encoding));
    },
    getMultipleAccounts: (p) => {
      const c = config(p, 1);
      const commitment = commitmentOf(c);
      checkMinContextSlot(c, commitment);
      const list = p[0];
      if (!Array.isArray(list) || list.length > 100) throw new RpcError(-32602, 'Invalid params: up to 100 addresses');
      return withContext(commitment, list.map((_, i) => accountJson(ledger.account(addressParam(list, i), commitment), c.encoding)));
    },
    getTokenAccountsByOwner: (p) => {
      const owner = addressParam(p, 0);
      const filter = config(p, 1);
      const c = config(p, 2);
      const commitment = commitmentOf(c);
      checkMinContextSlot(c, commitment);
      let programs: Address[];
      let mint: Address | undefined;
      if (typeof filter.mint === 'string' && isAddress(filter.mint)) {
        mint = filter.mint;
        const m = ledger.account(mint, commitment);
        if (!m.exists) throw new RpcError(-32602, 'Invalid param: could not find mint');
        programs = [m.programAddress];
      } else if (typeof filter.programId === 'string' && (filter.programId === TOKEN_PROGRAM || filter.programId === TOKEN_2022_PROGRAM)) {
        programs = [filter.programId];
      } else throw new RpcError(-32602, 'Invalid params: a mint or a token programId is required');
      const value = ledger
        .tokenAccountsOf(owner, commitment)
        .filter((a) => programs.includes(a.programAddress) && (!mint || addressDecoder.decode(new Uint8Array(a.data).subarray(0, 32)) === mint))
        .map((a) => ({ pubkey: a.address, account: accountJson(a, c.encoding) }));
      return withContext(commitment, value);
    },
    getMinimumBalanceForRentExemption: (p) => ledger.svm.minimumBalanceForRentExemption(BigInt(slotParam(p[0] ?? 0, 'data length'))),
    getFeeForMessage: (p) => {
      const c = config(p, 1);
      const commitment = commitmentOf(c);
      let message: CompiledMessage;
      try {
        const decoded = messageDecoder.decode(bytesParam(p[0], 'base64', 'base64'));
        if (decoded.version === 1) throw new RpcError(-32602, 'Invalid params: version 1 messages are not served');
        message = decoded;
      } catch (e) {
        if (e instanceof RpcError) throw e;
        throw new RpcError(-32602, 'Invalid params: the message could not be decoded');
      }
      return withContext(commitment, ledger.lastValidBlockHeight(message.lifetimeToken) === undefined ? null : messageFee(message));
    },
    getRecentPrioritizationFees: (p) => {
      const wanted = Array.isArray(p[0]) ? new Set((p[0] as unknown[]).map((_, i) => addressParam(p[0] as Params, i))) : undefined;
      const top = ledger.slot('confirmed');
      return ledger.blockSlots(Math.max(0, top - 150), top, 'confirmed').map((slot) => {
        const block = ledger.block(slot, 'confirmed')!;
        const fees = block.transactions.filter((t) => !wanted || t.accountKeys.some((k) => wanted.has(k))).map((t) => computeBudget(t.message).price);
        return { slot, prioritizationFee: fees.length ? fees.reduce((a, b) => (a < b ? a : b)) : 0n };
      });
    },
    simulateTransaction: (p) => {
      const c = config(p, 1);
      const commitment = commitmentOf(c);
      const wire = bytesParam(p[0], c.encoding, 'base58');
      if (c.sigVerify === true && c.replaceRecentBlockhash === true) throw new RpcError(-32602, 'Invalid params: sigVerify may not be used with replaceRecentBlockhash');
      let message: CompiledMessage;
      try {
        message = decodeWireTransaction(wire).message;
      } catch {
        throw new RpcError(-32602, 'Invalid params: the transaction could not be decoded');
      }
      if (c.replaceRecentBlockhash !== true && ledger.lastValidBlockHeight(message.lifetimeToken) === undefined) {
        return withContext(commitment, { err: 'BlockhashNotFound', logs: [], accounts: null, unitsConsumed: 0, returnData: null, innerInstructions: null });
      }
      const sim = ledger.simulate(wire, c.sigVerify === true);
      const latest = ledger.latestBlock('processed');
      return withContext(commitment, {
        err: sim.err,
        logs: sim.logs,
        accounts: null,
        unitsConsumed: sim.unitsConsumed,
        returnData: null,
        innerInstructions: null,
        ...(c.replaceRecentBlockhash === true ? { replacementBlockhash: { blockhash: latest.blockhash, lastValidBlockHeight: latest.blockHeight + 150 } } : {}),
      });
    },
    sendTransaction: (p) => {
      const c = config(p, 1);
      const wire = bytesParam(p[0], c.encoding, 'base58');
      let signature: string;
      let message: CompiledMessage;
      try {
        ({ signature, message } = decodeWireTransaction(wire));
      } catch {
        throw new RpcError(-32602, 'invalid transaction: failed to deserialize');
      }
      if (c.skipPreflight !== true) {
        if (ledger.transaction(signature, 'processed')) throw preflightError('AlreadyProcessed', []);
        if (ledger.lastValidBlockHeight(message.lifetimeToken) === undefined) throw preflightError('BlockhashNotFound', []);
        const sim = ledger.simulate(wire, true);
        if (sim.err !== null) throw preflightError(sim.err, sim.logs, sim.unitsConsumed);
      }
      // Without preflight a transaction that cannot land is dropped silently, as a cluster drops it.
      actions.submit(wire);
      return signature;
    },
    requestAirdrop: async (p) => {
      const to = addressParam(p, 0);
      const amount = p[1];
      if (typeof amount !== 'number' && typeof amount !== 'bigint') throw new RpcError(-32602, 'Invalid params: lamports');
      const lamports = BigInt(amount);
      if (lamports <= 0n || lamports > 1_000_000n * 1_000_000_000n) throw new RpcError(-32602, 'Invalid params: lamports must be between 1 and 1,000,000 SOL');
      return actions.airdrop(to, lamports);
    },
    getSignatureStatuses: (p) => {
      const list = p[0];
      if (!Array.isArray(list) || list.length > 256) throw new RpcError(-32602, 'Invalid params: up to 256 signatures');
      return withContext('processed', list.map((s) => {
        const tx = typeof s === 'string' ? ledger.transaction(s, 'processed') : undefined;
        return tx && (inStatusCache(tx.slot) || (history.served && tx.slot >= history.firstAvailable)) ? statusOf(tx) : null;
      }));
    },
    getTransaction: (p) => {
      const c = config(p, 1);
      const commitment = blockCommitment(c);
      if (typeof p[0] !== 'string') throw new RpcError(-32602, 'Invalid params: signature');
      historyServed();
      const tx = ledger.transaction(p[0], commitment);
      if (!tx || tx.slot < history.firstAvailable) return null;
      const block = ledger.block(tx.slot, commitment)!;
      return { slot: tx.slot, blockTime: Math.floor(block.timeMs / 1000), ...(transactionJson(tx, c.encoding, c.maxSupportedTransactionVersion) as object) };
    },
    getSignaturesForAddress: (p) => {
      const c = config(p, 1);
      const commitment = blockCommitment(c);
      const limit = c.limit === undefined ? 1000 : slotParam(c.limit, 'limit');
      if (limit < 1 || limit > 1000) throw new RpcError(-32602, 'Invalid params: limit must be 1 to 1000');
      historyServed();
      let list = ledger.transactionsOf(addressParam(p, 0), commitment).filter((t) => t.slot >= history.firstAvailable);
      if (typeof c.before === 'string') {
        const i = list.findIndex((t) => t.signature === c.before);
        list = i < 0 ? [] : list.slice(i + 1);
      }
      if (typeof c.until === 'string') {
        const i = list.findIndex((t) => t.signature === c.until);
        if (i >= 0) list = list.slice(0, i);
      }
      const finalized = ledger.slot('finalized');
      return list.slice(0, limit).map((t) => ({
        signature: t.signature,
        slot: t.slot,
        err: t.err,
        memo: null,
        blockTime: Math.floor(ledger.block(t.slot, commitment)!.timeMs / 1000),
        confirmationStatus: t.slot <= finalized ? 'finalized' : 'confirmed',
      }));
    },
    getBlock: (p) => {
      const slot = slotParam(p[0]);
      const c = config(p, 1);
      const commitment = blockCommitment(c);
      const block = blockFor(slot, commitment);
      const details = c.transactionDetails ?? 'full';
      const out: Record<string, unknown> = {
        blockhash: block.blockhash,
        previousBlockhash: block.previousBlockhash,
        parentSlot: block.parentSlot,
        blockHeight: block.blockHeight,
        blockTime: Math.floor(block.timeMs / 1000),
      };
      if (details === 'full') out.transactions = block.transactions.map((t) => transactionJson(t, c.encoding, c.maxSupportedTransactionVersion));
      else if (details === 'signatures') out.signatures = block.transactions.map((t) => t.signature);
      else if (details !== 'none') throw new RpcError(-32602, `Invalid params: transactionDetails ${String(details)} is not served (full, signatures, none)`);
      if (c.rewards !== false) out.rewards = [];
      return out;
    },
    getBlockTime: (p) => Math.floor(blockFor(slotParam(p[0]), 'confirmed').timeMs / 1000),
    getBlocks: (p) => {
      const start = slotParam(p[0], 'start slot');
      const endGiven = typeof p[1] === 'number';
      const c = config(p, endGiven ? 2 : 1);
      const commitment = blockCommitment(c);
      const end = endGiven ? slotParam(p[1], 'end slot') : ledger.slot(commitment);
      if (end - start > 500_000) throw new RpcError(-32602, 'Slot range too large; max 500000');
      return ledger.blockSlots(start, end, commitment);
    },
    getBlocksWithLimit: (p) => {
      const start = slotParam(p[0], 'start slot');
      const limit = slotParam(p[1], 'limit');
      const commitment = blockCommitment(config(p, 2));
      return ledger.blockSlots(start, Number.MAX_SAFE_INTEGER, commitment).slice(0, limit);
    },
    getFirstAvailableBlock: () => history.firstAvailable,
    /** Keel's own: what the node keeps ({ served?, firstAvailableSlot? }), for tests of a node without history or with a pruned ledger. */
    keel_setHistory: (p) => {
      const c = config(p, 0);
      if (c.served !== undefined) history.served = c.served === true;
      if (c.firstAvailableSlot !== undefined) history.firstAvailable = slotParam(c.firstAvailableSlot, 'firstAvailableSlot');
      return { ...history };
    },
    /** Keel's own: abandons the blocks after a slot (not yet finalized), for reorganisation tests. */
    keel_rollback: (p) => actions.rollback(slotParam(p[0])),
  };
  return new Map(Object.entries(methods));
}

