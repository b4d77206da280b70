import { hash, randomBytes } from 'node:crypto';
import { Environment, Host } from './permissions';

/**
 * API key strings: `<host><env>_<secret>` where the literal prefix tells the host
 * (kc = core, kp = pro) and the environment (test = sandbox, live = production).
 * Only a SHA-256 hash of the whole string is stored; keys carry 256 bits of entropy,
 * so a slow password hash would add latency without adding safety.
 */
const HOST_CODE: Record<Host, string> = { core: 'kc', pro: 'kp' };
const ENV_CODE: Record<Environment, string> = { sandbox: 'test', production: 'live' };
const KEY_PATTERN = /^(kc|kp)_(test|live)_[A-Za-z0-9_-]{43}$/;

export interface GeneratedKey {
  secret: string;
  prefix: string;
  hash: Buffer;
}

export function generateApiKey(host: Host, environment: Environment): GeneratedKey {
  const secret = `${HOST_CODE[host]}_${ENV_CODE[environment]}_${randomBytes(32).toString('base64url')}`;
  return { secret, prefix: displayPrefix(secret), hash: hashApiKey(secret) };
}

/** One-shot hashing: a sixth of createHash's cost, paid on every authenticated request. */
export function hashApiKey(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/** The part of a key that may be shown again: the literal prefix and four characters. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, 12);
}

export function parseApiKey(secret: string): { host: Host; environment: Environment } | null {
  const m = KEY_PATTERN.exec(secret);
  if (!m) return null;
  return { host: m[1] === 'kc' ? 'core' : 'pro', environment: m[2] === 'test' ? 'sandbox' : 'production' };
}
