import { Worker } from 'node:worker_threads';

/** BIP-44 for Ethereum: m/44'/60'/0'/0/i. Index 0 is the master wallet's own address. */
export const ACCOUNT_PATH = "m/44'/60'/0'/0";

/** Solana's (SLIP-0010 ed25519, hardened only): m/44'/501'/i'/0'. Index 0 is the master wallet's own address. */
export function solanaPath(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= 2 ** 31) throw new Error(`invalid Solana key index ${index}`);
  return `m/44'/501'/${index}'/0'`;
}

/** What the thread does, by name: what each is given and answers. */
interface Jobs {
  /** A new 24-word mnemonic, its account's extended public key and the address at index 0. */
  newWallet: { args: Record<string, never>; result: { phrase: string; accountXpub: string; walletAddress: string } };
  /** The private key of address `index` under the phrase's account. */
  privateKey: { args: { phrase: string; index: number }; result: string };
  /** The address at `index` under an account's extended public key. */
  address: { args: { accountXpub: string; index: number }; result: string };
  /** A new 24-word mnemonic for a Solana wallet (no extended public key: ed25519 derivation is hardened only). */
  newPhrase: { args: Record<string, never>; result: { phrase: string } };
  /** SLIP-0010 ed25519 key at a path under the phrase's BIP-39 seed: 32-byte private key and public key, hex. */
  ed25519FromPhrase: { args: { phrase: string; path: string }; result: Ed25519Key };
  /** The same from a raw seed (hex): the published SLIP-0010 test vectors are given as seeds. */
  ed25519FromSeed: { args: { seedHex: string; path: string }; result: Ed25519Key };
}

export interface Ed25519Key {
  privateKey: string;
  publicKey: string;
}

// The thread's whole program. It is JavaScript given as text (eval) so that it runs alike from the
// compiled build and from the test runner's TypeScript. Its errors carry ethers' code only: an
// error's message must never be able to carry a phrase out.
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const { randomBytes } = require('node:crypto');
const { ethers } = require(workerData.ethers);
const ACCOUNT = workerData.accountPath;
const hex = (bytes) => Buffer.from(bytes).toString('hex');
// Loaded on the first ed25519 job only (an ES module): EVM jobs never depend on it.
let slip10;
const ed25519 = (seed, path) => {
  slip10 ??= require(workerData.slip10);
  const key = slip10.HDKey.fromMasterSeed(seed).derive(path);
  return { privateKey: hex(key.privateKey), publicKey: hex(key.publicKeyRaw) };
};
const jobs = {
  newWallet() {
    const mnemonic = ethers.Mnemonic.fromEntropy(randomBytes(32));
    const account = ethers.HDNodeWallet.fromMnemonic(mnemonic, ACCOUNT);
    return { phrase: mnemonic.phrase, accountXpub: account.neuter().extendedKey, walletAddress: account.deriveChild(0).address };
  },
  privateKey: ({ phrase, index }) => ethers.HDNodeWallet.fromPhrase(phrase, undefined, ACCOUNT + '/' + index).privateKey,
  address: ({ accountXpub, index }) => ethers.HDNodeWallet.fromExtendedKey(accountXpub).deriveChild(index).address,
  newPhrase: () => ({ phrase: ethers.Mnemonic.fromEntropy(randomBytes(32)).phrase }),
  ed25519FromPhrase: ({ phrase, path }) => ed25519(ethers.getBytes(ethers.Mnemonic.fromPhrase(phrase).computeSeed()), path),
  ed25519FromSeed: ({ seedHex, path }) => ed25519(ethers.getBytes('0x' + seedHex), path),
};
parentPort.on('message', ({ id, job, args }) => {
  try {
    parentPort.postMessage({ id, result: jobs[job](args) });
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.code) || 'UNKNOWN_ERROR') });
  }
});
`;

interface Waiting {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * HD key work on a thread of its own. Deriving a signing key from a mnemonic or making a new wallet
 * costs about 5 ms of CPU here (the BIP-39 seed's 2,048 rounds of HMAC and a curve multiplication at
 * each of the path's levels), an address about 1 ms (`npm run bench -- key-derivation`): on the event
 * loop each would stall every request of the process for as long. The thread starts on first use, holds nothing between jobs,
 * does not keep the process alive while idle and ends after `idleMs` without work.
 */
export class KeyThread {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(private readonly idleMs = 30_000) {}

  run<K extends keyof Jobs>(job: K, args: Jobs[K]['args']): Promise<Jobs[K]['result']> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.waiting.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (r: unknown) => void, reject });
      worker.postMessage({ id, job, args });
    });
  }

  /** Ends the thread; jobs still waiting are refused. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.stopped(new Error('the key thread was closed'));
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = new Worker(PROGRAM, { eval: true, workerData: { ethers: require.resolve('ethers'), slip10: require.resolve('micro-key-producer/slip10.js'), accountPath: ACCOUNT_PATH } });
    worker.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: string }) => {
      const waiting = this.waiting.get(id);
      if (!waiting) return;
      this.waiting.delete(id);
      if (error === undefined) waiting.resolve(result);
      else waiting.reject(new Error(`HD key derivation failed (${error})`));
      if (this.waiting.size === 0) this.idle(worker);
    });
    worker.on('error', (e) => this.worker === worker && this.stopped(new Error(`the key thread failed: ${e.message}`)));
    worker.on('exit', (code) => this.worker === worker && this.stopped(new Error(`the key thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private idle(worker: Worker): void {
    worker.unref();
    this.idleTimer = setTimeout(() => {
      if (this.worker !== worker || this.waiting.size) return;
      this.worker = null;
      void worker.terminate();
    }, this.idleMs).unref();
  }

  private stopped(error: Error): void {
    this.worker = null;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}
