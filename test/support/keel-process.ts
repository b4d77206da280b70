import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Config } from '../../src/platform/config';

const ROOT = join(__dirname, '..', '..');

/** `keel start --roles <roles>` from the TypeScript sources in a child process, for crash tests. */
export async function startKeelProcess(config: Config, roles: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-r', join(__dirname, 'swc-register.js'), join(ROOT, 'src', 'cli', 'main.ts'), 'start', '--roles', roles], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: config.DATABASE_URL, REDIS_URL: config.REDIS_URL, REDIS_PREFIX: config.REDIS_PREFIX, HOST: '127.0.0.1', CORE_PORT: '0', PRO_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`keel process did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('keel started')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`keel process exited with ${code}:\n${output}`)));
  });
  return child;
}

export async function stopKeelProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
