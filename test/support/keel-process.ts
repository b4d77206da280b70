import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Config } from '../../src/platform/config';

const ROOT = join(__dirname, '..', '..');
const START_TIMEOUT_MS = 60_000;

/** `keel start --roles <roles>` from the TypeScript sources in a child process, for crash tests. */
export interface KeelProcess {
  child: ChildProcess;
  coreUrl?: string;
  proUrl?: string;
  /** Everything the process has printed so far (its log lines). */
  output(): string;
}

function spawnKeel(args: string[], env: Record<string, string | undefined>): ChildProcess {
  return spawn(process.execPath, ['-r', join(__dirname, 'swc-register.js'), join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
    cwd: ROOT,
    // As in testKeelConfig: settlement only where a test turns it on.
    env: { ...process.env, SETTLEMENT_ENABLED: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface KeelRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From spawn to exit. */
  ms: number;
}

/** Runs `keel <args>` to its end (killed after `giveUpMs`) and reports what it printed and how long it took. */
export async function runKeel(args: string[], env: Record<string, string | undefined>, giveUpMs = 30_000): Promise<KeelRun> {
  const started = performance.now();
  const child = spawnKeel(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), giveUpMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr, ms: performance.now() - started };
}

export async function startKeelProcess(config: Config, roles: string, env: Record<string, string> = {}): Promise<KeelProcess> {
  const child = spawnKeel(['start', '--roles', roles], {
    DATABASE_URL: config.DATABASE_URL,
    REDIS_URL: config.REDIS_URL,
    REDIS_PREFIX: config.REDIS_PREFIX,
    HOST: '127.0.0.1',
    CORE_PORT: '0',
    PRO_PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
  let output = '';
  const started = await new Promise<{ core?: string; pro?: string }>((resolve, reject) => {
    // Compiling the sources at start-up takes seconds, and more on a loaded machine.
    const timer = setTimeout(() => reject(new Error(`keel process did not start:\n${output}`)), START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('"keel started"'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`keel process exited with ${code}:\n${output}`)));
  });
  return { child, coreUrl: started.core, proUrl: started.pro, output: () => output };
}

export async function stopKeelProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
