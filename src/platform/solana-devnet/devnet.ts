/**
 * A sandbox Solana network in this process: LiteSVM (the Solana runtime, with the System, SPL Token,
 * Token-2022 and Associated Token programs) under a ledger of slots and blocks, served as Solana
 * JSON-RPC over HTTP on loopback, so a `@solana/kit` client talks to it as to any RPC endpoint.
 *
 * Slots are produced on a timer; `confirmed` and `finalized` trail the head by a fixed number of
 * blocks (ledger.ts); test USDC and USDT mints sit at fixed addresses and a faucet grants SOL and
 * tokens (genesis.ts, faucet.ts); with a dataDir the network is journalled and comes back as it was
 * (journal.ts); `keel_rollback` abandons recent, not yet finalized blocks, for reorganisation tests.
 * What it does not emulate is listed in docs/solana.md.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Address, getBase64Encoder } from '@solana/kit';
import { Commitment, SolanaLedger } from './ledger';
import { DEVNET_MINTS, DevnetMint, devnetFaucet, writeGenesis } from './genesis';
import { FAUCET_ATTEMPTS, faucetTransaction, FaucetGrant } from './faucet';
import { JournalEntry, SOLANA_JOURNAL_FILE, SolanaJournal, SolanaJournalHeader, readSolanaJournal } from './journal';
import { RpcError, createRpcMethods } from './rpc-methods';

export interface SolanaDevnetOptions {
  /** 0 or undefined: the OS picks a free port. */
  port?: number;
  /** Milliseconds a slot lasts. Default 400 (as on Solana). */
  slotMs?: number;
  /** Blocks between the head and `confirmed`. Default 1. */
  confirmedLag?: number;
  /** Blocks between the head and `finalized`. Default 32 (as on Solana). */
  finalizedLag?: number;
  /**
   * Where the journal goes: `<dataDir>/solana-devnet/solana-journal.jsonl`; the next start with the
   * same dataDir replays it. Default: no journal, a network that starts from genesis every time.
   */
  dataDir?: string;
}

export type SolanaDevnetHistory = 'fresh' | 'restored' | 'discarded';

export interface SolanaDevnet {
  rpcUrl: string;
  port: number;
  history: SolanaDevnetHistory;
  discardReason?: string;
  /** The test token mints (fixed addresses, 6 decimals). */
  mints: readonly DevnetMint[];
  /** The faucet's account (its key is published: genesis.ts). */
  faucet: Address;
  slotMs: number;
  confirmedLag: number;
  finalizedLag: number;
  slot(commitment: Commitment): number;
  /** Grants SOL or a test token (by mint address) from the faucet; answers the signature once it is in the head block. */
  fund(grant: FaucetGrant): Promise<string>;
  /** Abandons the blocks after `slot` (not finalized); answers the undone signatures. */
  rollback(slot: number): { undone: string[]; head: number };
  /** Stops producing slots and closes the server (and its connections). Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_SLOT_MS = 400;
/** How far ahead a lease line lets slots be produced without another line. */
const LEASE_SLOTS = 64;
const VERSION = 'keel-litesvm-1.5.0';
const MAX_BODY_BYTES = 1 << 20;

export async function startSolanaDevnet(opts: SolanaDevnetOptions = {}): Promise<SolanaDevnet> {
  const slotMs = opts.slotMs ?? DEFAULT_SLOT_MS;
  if (!Number.isInteger(slotMs) || slotMs < 10) throw new Error(`startSolanaDevnet: invalid slotMs ${slotMs}`);
  const faucetSigner = await devnetFaucet();
  const wanted = { confirmedLag: opts.confirmedLag ?? 1, finalizedLag: opts.finalizedLag ?? 32 };

  let journal: SolanaJournal | undefined;
  let history: SolanaDevnetHistory = 'fresh';
  let discardReason: string | undefined;
  let ledger: SolanaLedger | undefined;
  let lease = 0;
  let header: SolanaJournalHeader = { journal: 1, network: 'keel-solana-devnet', genesisTimeMs: Date.now(), ...wanted };

  if (opts.dataDir) {
    const dir = path.join(path.resolve(opts.dataDir), 'solana-devnet');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, SOLANA_JOURNAL_FILE);
    journal = new SolanaJournal(file);
    try {
      const recorded = readSolanaJournal(file);
      if (recorded) {
        ({ ledger, lease } = replay(recorded.header, recorded.entries, faucetSigner.address, slotMs));
        header = recorded.header;
        journal.create(header, recorded.entries);
        history = 'restored';
      }
    } catch (e) {
      discardReason = (e as Error).message;
      journal.setAside();
      history = 'discarded';
      ledger = undefined;
    }
    if (!ledger) journal.create(header);
  }
  ledger ??= new SolanaLedger(header, header.genesisTimeMs, (svm) => writeGenesis(svm, faucetSigner.address));
  const live = ledger;

  const record = (entry: JournalEntry) => journal?.append(entry);
  const submit = (wire: Uint8Array) => {
    const outcome = live.execute(wire);
    if (outcome.landed) record({ s: live.head.slot, t: live.head.timeMs, tx: Buffer.from(wire).toString('base64') });
    return outcome;
  };
  const fund = async (grant: FaucetGrant): Promise<string> => {
    let outcome: ReturnType<typeof submit>;
    for (let attempt = 1; ; attempt++) {
      const latest = live.latestBlock('processed');
      const wire = await faucetTransaction(faucetSigner, grant, { blockhash: latest.blockhash, lastValidBlockHeight: BigInt(latest.blockHeight + 150) });
      outcome = submit(new Uint8Array(getBase64Encoder().encode(wire)));
      // The same grant signed by another process under the same blockhash: signed again.
      if (outcome.landed || outcome.err !== 'AlreadyProcessed' || attempt >= FAUCET_ATTEMPTS) break;
    }
    if (!outcome.landed) throw new RpcError(-32600, `airdrop request failed: ${JSON.stringify(outcome.err)}`);
    if (outcome.transaction.err !== null) throw new RpcError(-32600, `airdrop request failed: ${JSON.stringify(outcome.transaction.err)}`);
    return outcome.transaction.signature;
  };
  const rollback = (slot: number) => {
    const at = live.head.slot;
    let undone: string[];
    try {
      undone = live.rollback(slot, Date.now());
    } catch (e) {
      throw new RpcError(-32602, `Invalid params: ${(e as Error).message}`);
    }
    record({ rollback: slot, at, t: Date.now() });
    return { undone, head: live.head.slot };
  };
  const methods = createRpcMethods(live, { submit, airdrop: (to, lamports) => fund({ to, amount: lamports }), rollback }, VERSION);

  // Slots: sealed on a timer; a lease line is written before a slot beyond the last lease opens.
  if (journal && live.head.slot >= lease) record({ lease: (lease = live.head.slot + LEASE_SLOTS) });
  const timer = setInterval(() => {
    if (journal && live.head.slot + 1 >= lease) record({ lease: (lease = live.head.slot + 1 + LEASE_SLOTS) });
    live.seal(Date.now());
  }, slotMs);
  timer.unref();

  // A request that breaks off mid-body (the client went away) ends its connection, nothing else.
  const server = http.createServer((req, res) => void serve(methods, req, res).catch(() => res.destroy()));
  server.keepAliveTimeout = 5_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
    });
  } catch (e) {
    clearInterval(timer);
    throw e;
  }
  const port = (server.address() as { port: number }).port;
  let stopping: Promise<void> | undefined;
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    port,
    history,
    ...(discardReason ? { discardReason } : {}),
    mints: DEVNET_MINTS,
    faucet: faucetSigner.address,
    slotMs,
    confirmedLag: header.confirmedLag,
    finalizedLag: header.finalizedLag,
    slot: (commitment) => live.slot(commitment),
    fund,
    rollback,
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        clearInterval(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** A ledger rebuilt from a journal; throws when a transaction does not land again as it did. */
function replay(header: SolanaJournalHeader, entries: JournalEntry[], faucet: Address, slotMs: number): { ledger: SolanaLedger; lease: number } {
  const ledger = new SolanaLedger(header, header.genesisTimeMs, (svm) => writeGenesis(svm, faucet));
  let lease = 0;
  let lastTime = header.genesisTimeMs;
  const timeAt = (slot: number) => Math.min(Date.now(), lastTime + (slot - ledger.head.slot) * slotMs);
  for (const e of entries) {
    if ('lease' in e) lease = Math.max(lease, e.lease);
    else if ('rollback' in e) {
      ledger.advanceTo(e.at, timeAt);
      ledger.rollback(e.rollback, e.t);
      lastTime = e.t;
    } else {
      ledger.advanceTo(e.s, (slot) => (slot === e.s ? e.t : timeAt(slot)));
      lastTime = e.t;
      const outcome = ledger.execute(new Uint8Array(getBase64Encoder().encode(e.tx)));
      if (!outcome.landed) throw new Error(`a journalled transaction of slot ${e.s} did not land again (${JSON.stringify(outcome.err)})`);
    }
  }
  // Every slot a client may have seen is produced again (empty where the journal has nothing).
  ledger.advanceTo(Math.max(lease, ledger.head.slot), timeAt);
  return { ledger, lease };
}

/** JSON with u64 values (bigint) written as plain numbers, as Solana's RPC writes them. */
function stringify(value: unknown): string {
  const raw = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? raw(v.toString()) : v));
}

async function call(methods: ReturnType<typeof createRpcMethods>, request: unknown): Promise<unknown> {
  const r = request as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  const id = r && typeof r === 'object' && (typeof r.id === 'string' || typeof r.id === 'number') ? r.id : null;
  if (!r || typeof r !== 'object' || r.jsonrpc !== '2.0' || typeof r.method !== 'string') return { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id };
  const handler = methods.get(r.method);
  if (!handler) return { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id };
  if (r.params !== undefined && !Array.isArray(r.params)) return { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params: expected an array' }, id };
  try {
    return { jsonrpc: '2.0', result: await handler((r.params as unknown[]) ?? []), id };
  } catch (e) {
    if (e instanceof RpcError) return { jsonrpc: '2.0', error: { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) }, id };
    return { jsonrpc: '2.0', error: { code: -32603, message: `Internal error: ${(e as Error).message}` }, id };
  }
}

async function serve(methods: ReturnType<typeof createRpcMethods>, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const send = (status: number, body: unknown) => {
    const text = stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  if (req.method !== 'POST') return send(405, { jsonrpc: '2.0', error: { code: -32600, message: 'Use POST' }, id: null });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return send(413, { jsonrpc: '2.0', error: { code: -32600, message: 'Request too large' }, id: null });
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return send(200, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
  }
  if (Array.isArray(body)) return send(200, await Promise.all(body.map((r) => call(methods, r))));
  return send(200, await call(methods, body));
}

