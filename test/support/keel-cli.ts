import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Config } from '../../src/platform/config';

const ROOT = join(__dirname, '..', '..');

/** Runs `keel dev fund` from the sources beside the Keel that `config` describes, as an operator would; resolves with the JSON line it prints. */
export function keelDevFund(config: Pick<Config, 'DATABASE_URL' | 'REDIS_PREFIX'>, address: string, asset: string, amount: string): Promise<{ txHash: string; [field: string]: unknown }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', join(ROOT, 'test', 'support', 'swc-register.js'), join(ROOT, 'src', 'cli', 'main.ts'), 'dev', 'fund', '--address', address, '--asset', asset, '--amount', amount], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: config.DATABASE_URL, REDIS_PREFIX: config.REDIS_PREFIX },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`keel dev fund exited ${code}: ${stderr}`))));
  });
}
