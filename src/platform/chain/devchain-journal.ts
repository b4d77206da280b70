/**
 * A dev chain's memory across restarts. Hardhat 2 keeps its state in memory and has no state dump,
 * so the chain's history is kept instead: an append-only journal (JSON lines) of every block,
 * its timestamp and its raw signed transactions. On the next start the node is created with the
 * same genesis (initialDate, accounts) and the journal is replayed into it before the JSON-RPC
 * server listens, each block checked against its recorded hash, so the chain comes back with the
 * same block hashes and state.
 *
 * The journal is written inside the Hardhat process, by a wrapper around the provider the node
 * serves: every answer waits until the blocks mined so far are in the file, so no client can see
 * a block that a crash could lose. An evm_revert or hardhat_reset rewrites the journal down to the
 * block both histories share.
 *
 * hardhatJournalPlugin runs in the Hardhat process: devchain.ts writes its source into the
 * generated hardhat config, so it must be self-contained (only `require` and its argument).
 */

export const JOURNAL_FILE = 'chain-journal.jsonl';
/** Printed (with the reason) by the Hardhat process when the journal cannot be replayed to the same hashes. */
export const UNREPLAYABLE_MARKER = 'KEEL_JOURNAL_UNREPLAYABLE';

export interface JournalHeader {
  journal: 1;
  chainId: number;
  /** The genesis timestamp (Hardhat's initialDate), fixed when the journal is created. */
  initialDate: string;
}

export interface JournalPluginOptions {
  journalPath: string;
  header: JournalHeader;
  unreplayableMarker: string;
  blockIntervalMs: number;
  /** Absolute module paths: the generated config lives outside the project. */
  hardhatConfigModule: string;
  hardhatTaskNamesModule: string;
  ethersModule: string;
}

/** Reads the header of an existing journal; undefined when there is none or it is unreadable. */
export function readJournalHeader(journalPath: string): JournalHeader | undefined {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fs = require('node:fs') as typeof import('node:fs');
  let text: string;
  try {
    const fd = fs.openSync(journalPath, 'r');
    try {
      const buf = Buffer.alloc(512);
      text = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  try {
    const header = JSON.parse(text.split('\n')[0]) as JournalHeader;
    return header.journal === 1 && typeof header.initialDate === 'string' ? header : undefined;
  } catch {
    return undefined;
  }
}

/* eslint-disable @typescript-eslint/no-require-imports */
export function hardhatJournalPlugin(options: JournalPluginOptions): void {
  const fs = require('node:fs') as typeof import('node:fs');
  const { subtask } = require(options.hardhatConfigModule) as typeof import('hardhat/config');
  const { TASK_NODE_GET_PROVIDER } = require(options.hardhatTaskNamesModule) as typeof import('hardhat/builtin-tasks/task-names');
  const { Transaction, toQuantity } = require(options.ethersModule) as typeof import('ethers');

  interface Provider {
    request(args: { method: string; params?: unknown[] }): Promise<unknown>;
  }
  interface RpcBlock {
    number: string;
    hash: string;
    timestamp: string;
    transactions: Record<string, unknown>[];
  }
  /** One line per block: number, hash, timestamp (seconds), raw signed transactions. */
  interface Entry {
    n: number;
    h: string;
    t: number;
    tx: string[];
  }

  const call = <T>(p: Provider, method: string, params: unknown[] = []) => p.request({ method, params }) as Promise<T>;

  /** The journal's blocks; `torn` when its last line was cut short by a crash mid-write. */
  function readEntries(): { entries: Entry[]; torn: boolean } {
    if (!fs.existsSync(options.journalPath)) return { entries: [], torn: false };
    const lines = fs.readFileSync(options.journalPath, 'utf8').split('\n');
    const entries: Entry[] = [];
    for (const line of lines.slice(1)) {
      if (!line) continue;
      try {
        entries.push(JSON.parse(line) as Entry);
      } catch {
        // That block was never answered to anyone (answers wait for the write): it is dropped.
        return { entries, torn: true };
      }
    }
    return { entries, torn: false };
  }

  /** Replaces the journal with these entries (write and rename, so a crash leaves the old or the new). */
  function rewrite(entries: Entry[]): void {
    const tmp = `${options.journalPath}.tmp`;
    fs.writeFileSync(tmp, [options.header, ...entries].map((e) => `${JSON.stringify(e)}\n`).join(''));
    fs.renameSync(tmp, options.journalPath);
  }

  function rawTransaction(tx: Record<string, unknown>): string {
    const signature = { r: tx.r as string, s: tx.s as string, v: Number(tx.v) };
    const t = Transaction.from({
      type: Number(tx.type),
      chainId: tx.chainId !== undefined ? BigInt(tx.chainId as string) : undefined,
      nonce: Number(tx.nonce),
      to: (tx.to as string | null) ?? null,
      data: tx.input as string,
      value: BigInt(tx.value as string),
      gasLimit: BigInt(tx.gas as string),
      gasPrice: Number(tx.type) < 2 ? BigInt(tx.gasPrice as string) : undefined,
      maxFeePerGas: Number(tx.type) >= 2 ? BigInt(tx.maxFeePerGas as string) : undefined,
      maxPriorityFeePerGas: Number(tx.type) >= 2 ? BigInt(tx.maxPriorityFeePerGas as string) : undefined,
      accessList: (tx.accessList as never) ?? undefined,
      signature,
    });
    if (t.hash !== tx.hash) throw new Error(`transaction ${String(tx.hash)} cannot be re-serialised (impersonated sender?)`);
    return t.serialized;
  }

  async function entryAt(p: Provider, n: number): Promise<Entry> {
    const b = await call<RpcBlock>(p, 'eth_getBlockByNumber', [toQuantity(n), true]);
    return { n, h: b.hash, t: Number(b.timestamp), tx: b.transactions.map(rawTransaction) };
  }

  async function hashAt(p: Provider, n: number): Promise<string | undefined> {
    const b = await call<RpcBlock | null>(p, 'eth_getBlockByNumber', [toQuantity(n), false]);
    return b?.hash;
  }

  /**
   * Replays the entries one block at a time (evm_mine with the recorded timestamp), checking the
   * hash after every block with transactions and at the end. hardhat_mine is not used: measured,
   * its bulk blocks beyond the 7th get other hashes. About 1.5 ms a block.
   */
  async function replay(p: Provider, entries: Entry[]): Promise<void> {
    await call(p, 'evm_setAutomine', [false]);
    for (const [i, e] of entries.entries()) {
      if (e.n !== i + 1) throw new Error(`block ${i + 1} is missing from the journal`);
      for (const raw of e.tx) await call(p, 'eth_sendRawTransaction', [raw]);
      await call(p, 'evm_mine', [e.t]);
      if (e.tx.length === 0 && i < entries.length - 1) continue;
      const got = await hashAt(p, e.n);
      if (got !== e.h) throw new Error(`block ${e.n} replayed as ${got}, recorded ${e.h}`);
    }
    // The replay set the chain's clock to the last recorded block; the next block is dated now again.
    const last = entries[entries.length - 1];
    if (last) await call(p, 'evm_setNextBlockTimestamp', [Math.max(Math.floor(Date.now() / 1000), last.t + 1)]);
    await call(p, 'evm_setAutomine', [true]);
  }

  subtask(TASK_NODE_GET_PROVIDER).setAction(async (args, _hre, runSuper) => {
    const provider = (await runSuper(args)) as Provider;
    const { entries, torn } = readEntries();
    try {
      await replay(provider, entries);
    } catch (e) {
      console.error(`${options.unreplayableMarker}: ${(e as Error).message}`);
      process.exit(3);
    }
    if (torn || entries.length === 0) rewrite(entries);
    const hashes = new Map(entries.map((e) => [e.n, e.h]));
    let journaled = entries.length;
    entries.length = 0;

    /** Rewinds the journal to the newest block the chain still has (after evm_revert, hardhat_reset). */
    async function rewind(): Promise<void> {
      let keep = journaled;
      while (keep > 0 && (await hashAt(provider, keep)) !== hashes.get(keep)) keep--;
      if (keep === journaled) return;
      rewrite(readEntries().entries.filter((e) => e.n <= keep));
      for (let n = keep + 1; n <= journaled; n++) hashes.delete(n);
      journaled = keep;
    }

    async function catchUp(rewound: boolean): Promise<void> {
      if (rewound) await rewind();
      const head = Number(await call<string>(provider, 'eth_blockNumber'));
      if (head <= journaled) return;
      const fresh: Entry[] = [];
      for (let n = journaled + 1; n <= head; n++) fresh.push(await entryAt(provider, n));
      fs.appendFileSync(options.journalPath, fresh.map((e) => `${JSON.stringify(e)}\n`).join(''));
      for (const e of fresh) hashes.set(e.n, e.h);
      journaled = head;
    }

    let writing: Promise<void> = Promise.resolve();
    const journalled = (rewound: boolean) =>
      (writing = writing.then(() => catchUp(rewound)).catch((e) => console.error(`chain journal: could not record blocks: ${(e as Error).message}`)));

    if (options.blockIntervalMs > 0) await call(provider, 'evm_setIntervalMining', [options.blockIntervalMs]);
    return new Proxy(provider, {
      get(target, prop, receiver) {
        if (prop !== 'request') {
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (req: { method: string; params?: unknown[] }) => {
          try {
            return await target.request(req);
          } finally {
            await journalled(req.method === 'evm_revert' || req.method === 'hardhat_reset');
          }
        };
      },
    });
  });
}
/* eslint-enable @typescript-eslint/no-require-imports */
