/**
 * Local EVM dev chains for development and tests: Hardhat Network served by the `hardhat` package's
 * own `node` task in a child process, on loopback, with nothing downloaded.
 *
 * Each chain is a `node <runner> --config <generated config> node --hostname 127.0.0.1 --port N`
 * child. The generated config fixes the chain id, the well-known Hardhat test mnemonic (so the
 * funded account and every deployment address are the same on each fresh chain), automine and
 * interval mining. The runner exits as soon as its stdin pipe closes, so a chain never outlives
 * the process that started it, even when that process is SIGKILLed.
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEV_CHAIN_MNEMONIC, DevAccount, devChainAccount } from './dev-accounts';
import { rpc } from './json-rpc';
import { hardhatJournalPlugin, JOURNAL_FILE, JournalHeader, readJournalHeader, UNREPLAYABLE_MARKER } from './devchain-journal';

const DEV_ACCOUNT_COUNT = 10;
/** Native balance of each dev account: 1,000,000 coins (in wei). */
const DEV_ACCOUNT_BALANCE = (10n ** 24n).toString();
const DEFAULT_BLOCK_INTERVAL_MS = 1000;
const DEFAULT_START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;

export interface DevChainOptions {
  chainId: number;
  /** 0 or undefined: the OS picks a free port (read back from the node's output). */
  port?: number;
  host?: '127.0.0.1';
  /** Interval mining period; 0 disables interval mining (automine stays on). Default 1000. */
  blockIntervalMs?: number;
  /**
   * Where the generated config, Hardhat's cache and the chain's journal go:
   * `<dataDir>/devchain-<chainId>`, kept after stop(); the next start with the same dataDir replays
   * the journal, so the chain comes back as it was (see devchain-journal.ts). Default: a fresh
   * temporary directory, removed by stop(), and a chain that starts empty.
   */
  dataDir?: string;
  /** How long to wait for eth_chainId to answer. Default 20 s. */
  startTimeoutMs?: number;
}

export interface DevChain {
  chainId: number;
  rpcUrl: string;
  port: number;
  /** Pid of the chain's process. */
  pid: number;
  /** Account #0 of DEV_CHAIN_MNEMONIC, holding 1,000,000 native coins at genesis. */
  fundedAccount: DevAccount;
  /**
   * What the chain started from: `fresh` (a new genesis), `restored` (its journal replayed to the
   * same block hashes), or `discarded` (a journal that could not be replayed was set aside and a
   * new genesis started; `discardReason` says why).
   */
  history: DevChainHistory;
  discardReason?: string;
  /** Kills the chain and waits for its process to exit (the port is free afterwards). Idempotent. */
  stop(): Promise<void>;
}

export type DevChainHistory = 'fresh' | 'restored' | 'discarded';

interface Running {
  child: ChildProcess;
  tempDir?: string;
}

/** Chains still running; killed synchronously if this process exits without stopping them. */
const running = new Set<Running>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const r of running) {
      try {
        r.child.kill('SIGKILL');
      } catch {
        // already gone
      }
      if (r.tempDir) fs.rmSync(r.tempDir, { recursive: true, force: true });
    }
    running.clear();
  });
}

function validateOptions(opts: DevChainOptions): void {
  if (!Number.isSafeInteger(opts.chainId) || opts.chainId <= 0) throw new Error(`startDevChain: invalid chainId ${opts.chainId}`);
  if (opts.port !== undefined && (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535)) {
    throw new Error(`startDevChain: invalid port ${opts.port}`);
  }
  if (opts.host !== undefined && opts.host !== '127.0.0.1') throw new Error(`startDevChain: dev chains bind to 127.0.0.1 only, not ${String(opts.host)}`);
  if (opts.blockIntervalMs !== undefined && (!Number.isInteger(opts.blockIntervalMs) || opts.blockIntervalMs < 0)) {
    throw new Error(`startDevChain: invalid blockIntervalMs ${opts.blockIntervalMs}`);
  }
  if (opts.startTimeoutMs !== undefined && !(opts.startTimeoutMs > 0)) throw new Error(`startDevChain: invalid startTimeoutMs ${opts.startTimeoutMs}`);
}

function hardhatConfig(workDir: string, chainId: number, blockIntervalMs: number, journal?: JournalHeader): string {
  const hardhat = {
    chainId,
    loggingEnabled: false,
    mining: { auto: true, interval: blockIntervalMs },
    accounts: { mnemonic: DEV_CHAIN_MNEMONIC, count: DEV_ACCOUNT_COUNT, accountsBalance: DEV_ACCOUNT_BALANCE },
  };
  if (journal) {
    // A fixed genesis; interval mining waits for the replay (the plugin turns it on); transactions
    // of one block are replayed in the order they were sent.
    Object.assign(hardhat, { initialDate: journal.initialDate, mining: { auto: true, interval: 0, mempool: { order: 'fifo' } } });
  }
  const config = {
    paths: {
      root: workDir,
      sources: path.join(workDir, 'contracts'),
      cache: path.join(workDir, 'cache'),
      artifacts: path.join(workDir, 'artifacts'),
    },
    networks: { hardhat },
  };
  const head = `// Generated by Keel's devchain for chain ${chainId}; rewritten on every start.\nmodule.exports = ${JSON.stringify(config, null, 2)};\n`;
  if (!journal) return head;
  const plugin = {
    journalPath: path.join(workDir, JOURNAL_FILE),
    header: journal,
    unreplayableMarker: UNREPLAYABLE_MARKER,
    blockIntervalMs,
    hardhatConfigModule: require.resolve('hardhat/config'),
    hardhatTaskNamesModule: require.resolve('hardhat/builtin-tasks/task-names'),
    ethersModule: require.resolve('ethers'),
  };
  return `${head}(${hardhatJournalPlugin.toString()})(${JSON.stringify(plugin)});\n`;
}

function runnerScript(hardhatCli: string, removeDirOnOrphan: boolean): string {
  const orphaned = removeDirOnOrphan
    ? "() => { try { require('fs').rmSync(__dirname, { recursive: true, force: true }); } finally { process.exit(0); } }"
    : '() => process.exit(0)';
  return [
    "'use strict';",
    "// Generated by Keel's devchain: runs `hardhat node`, and exits when the parent's stdin pipe closes",
    '// (the parent stopped us, exited or died), so the chain never outlives the process that started it.',
    `const orphaned = ${orphaned};`,
    "process.stdin.on('end', orphaned);",
    "process.stdin.on('error', orphaned);",
    'process.stdin.resume();',
    `require(${JSON.stringify(hardhatCli)});`,
    '',
  ].join('\n');
}

/** Environment for the child: no HARDHAT_* overrides from ours (they are read as CLI flags), no colours. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HARDHAT_') && k !== 'FORCE_COLOR') env[k] = v;
  return {
    ...env,
    NO_COLOR: '1',
    HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
    // The generated config lives outside the project, where Hardhat would not find itself installed.
    HARDHAT_EXPERIMENTAL_ALLOW_NON_LOCAL_INSTALLATION: 'true',
  };
}

const STARTED_LINE = /JSON-RPC server at http:\/\/([^\s/]+):(\d+)\//;

/**
 * Starts a Hardhat dev chain and resolves once it answers eth_chainId with `opts.chainId`. With a
 * dataDir the chain is journalled and comes back as it was on the next start; a journal that cannot
 * be replayed to the same hashes is set aside (`chain-journal.unreplayable-<time>.jsonl`) and the
 * chain starts from a new genesis.
 */
export async function startDevChain(opts: DevChainOptions): Promise<DevChain> {
  validateOptions(opts);
  if (!opts.dataDir) {
    const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), `keel-devchain-${opts.chainId}-`));
    return { ...(await launch(opts, tempDir, tempDir)), history: 'fresh' };
  }
  const workDir = path.join(path.resolve(opts.dataDir), `devchain-${opts.chainId}`);
  fs.mkdirSync(workDir, { recursive: true });
  const journalPath = path.join(workDir, JOURNAL_FILE);
  const fresh = async (discardReason?: string): Promise<DevChain> => {
    if (discardReason) fs.renameSync(journalPath, path.join(workDir, `chain-journal.discarded-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`));
    const chain = await launch(opts, workDir, undefined, newJournalHeader(opts.chainId));
    return discardReason ? { ...chain, history: 'discarded', discardReason } : { ...chain, history: 'fresh' };
  };
  const recorded = readJournalHeader(journalPath);
  if (!recorded) return fresh(fs.existsSync(journalPath) ? 'the journal is unreadable' : undefined);
  if (recorded.chainId !== opts.chainId) return fresh(`the journal belongs to chain ${recorded.chainId}`);
  try {
    return { ...(await launch(opts, workDir, undefined, recorded)), history: 'restored' };
  } catch (e) {
    const line = (e as Error).message.split('\n').find((l) => l.includes(UNREPLAYABLE_MARKER));
    if (!line) throw e;
    return fresh(line.slice(line.indexOf(UNREPLAYABLE_MARKER) + UNREPLAYABLE_MARKER.length + 2));
  }
}

/** The replay runs before the node answers: about 1.5 ms a block, a journal line being ~100 bytes (×3 for a loaded machine). */
function replayAllowanceMs(journalPath: string): number {
  const size = fs.existsSync(journalPath) ? fs.statSync(journalPath).size : 0;
  return Math.ceil((size / 100) * 1.5 * 3);
}

/** A new genesis: now, to the second (Hardhat's initialDate). */
function newJournalHeader(chainId: number): JournalHeader {
  return { journal: 1, chainId, initialDate: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString() };
}

async function launch(opts: DevChainOptions, workDir: string, tempDir: string | undefined, journal?: JournalHeader): Promise<Omit<DevChain, 'history' | 'discardReason'>> {
  const { chainId } = opts;
  const host = opts.host ?? '127.0.0.1';
  const blockIntervalMs = opts.blockIntervalMs ?? DEFAULT_BLOCK_INTERVAL_MS;
  const timeoutMs = (opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS) + (journal ? replayAllowanceMs(path.join(workDir, JOURNAL_FILE)) : 0);
  const started = Date.now();

  const configPath = path.join(workDir, 'hardhat.config.js');
  const runnerPath = path.join(workDir, 'run-hardhat-node.js');
  fs.writeFileSync(configPath, hardhatConfig(workDir, chainId, blockIntervalMs, journal));
  fs.writeFileSync(runnerPath, runnerScript(require.resolve('hardhat/internal/cli/cli.js'), tempDir !== undefined));

  const child = spawn(
    process.execPath,
    [runnerPath, '--config', configPath, 'node', '--hostname', host, '--port', String(opts.port ?? 0)],
    { cwd: workDir, env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true },
  );
  const entry: Running = { child, tempDir };
  running.add(entry);
  installExitHook();

  // Keep the tail of the node's output for error messages; reading it also keeps the pipes drained.
  const tail: string[] = [];
  let partial = '';
  let announced: { port: number } | undefined;
  const onOutput = (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split(/\r?\n/);
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > 30) tail.shift();
      const m = announced ? null : STARTED_LINE.exec(line);
      if (m) announced = { port: Number(m[2]) };
    }
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);

  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve();
    });
  });
  let spawnError: Error | undefined;
  child.on('error', (err) => {
    spawnError ??= err;
  });
  child.stdin?.on('error', () => undefined); // EPIPE once the chain is gone: nothing to do

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (!exitInfo && !spawnError) {
        child.kill('SIGTERM');
        const escalate = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(escalate);
      }
      child.stdin?.destroy();
      child.stdout?.destroy();
      child.stderr?.destroy();
      running.delete(entry);
      if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
    })());

  const describe = () => (tail.length ? `\n--- hardhat node output ---\n${tail.join('\n')}` : '');
  try {
    for (;;) {
      if (spawnError) throw new Error(`dev chain ${chainId}: could not start ${process.execPath}: ${spawnError.message}`);
      if (exitInfo) {
        throw new Error(
          `dev chain ${chainId} exited (${exitInfo.signal ?? `code ${exitInfo.code}`}) before answering eth_chainId${describe()}`,
        );
      }
      if (Date.now() - started > timeoutMs) {
        throw new Error(`dev chain ${chainId} did not answer eth_chainId within ${timeoutMs / 1000} s${describe()}`);
      }
      if (announced) {
        const rpcUrl = `http://${host}:${announced.port}`;
        const answered = await rpc<string>(rpcUrl, 'eth_chainId', [], 1000).catch(() => undefined);
        if (answered !== undefined) {
          if (Number(answered) !== chainId) {
            throw new Error(`dev chain at ${rpcUrl} answered chain id ${Number(answered)}, expected ${chainId}`);
          }
          return { chainId, rpcUrl, port: announced.port, pid: child.pid ?? -1, fundedAccount: devChainAccount(0), stop };
        }
      }
      await sleep(50);
    }
  } catch (e) {
    await stop();
    throw e;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
