import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../../src/platform/config';

const ROOT = join(__dirname, '..', '..');

/**
 * `keel <args>` from the TypeScript sources in a child process, beside the Keel that `config`
 * describes, as an operator runs it; resolves with the JSON line it prints last.
 */
export async function keelCommand<T = Record<string, unknown>>(config: Pick<Config, 'DATABASE_URL' | 'REDIS_URL' | 'REDIS_PREFIX'>, args: string[], more: Record<string, string | undefined> = {}): Promise<T> {
  const env = { ...process.env, DATABASE_URL: config.DATABASE_URL, REDIS_URL: config.REDIS_URL, REDIS_PREFIX: config.REDIS_PREFIX, LOG_LEVEL: 'silent', ...more };
  const { stdout } = await promisify(execFile)(process.execPath, ['-r', join(ROOT, 'test', 'support', 'swc-register.js'), join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: ROOT, env, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as T;
}

/** `keel dev fund`: sends from the dev chain's funded account through the registry's chains. */
export function keelDevFund(config: Pick<Config, 'DATABASE_URL' | 'REDIS_URL' | 'REDIS_PREFIX'>, address: string, asset: string, amount: string): Promise<{ txHash: string; [field: string]: unknown }> {
  return keelCommand(config, ['dev', 'fund', '--address', address, '--asset', asset, '--amount', amount]);
}
