import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../logger';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const FORMAT = 'v1';

/**
 * Wallet secrets at rest: AES-256-GCM under the key-encryption key, a fresh IV per secret, and
 * the owning record's id as associated data, so a sealed secret copied onto another row fails to
 * open instead of quietly signing for it.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`SecretBox: the key must be ${KEY_BYTES} bytes`);
  }

  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
  }

  open(sealed: string, boundTo: string): string {
    const [format, iv, tag, body] = sealed.split('.');
    if (format !== FORMAT || !iv || !tag || body === undefined) throw new Error('SecretBox: not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('SecretBox: the secret does not open with this key (wrong KEEL_MASTER_KEY, or tampered)');
    }
  }
}

export function parseMasterKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^(0x)?[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed.replace(/^0x/, ''), 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== KEY_BYTES) throw new Error('KEEL_MASTER_KEY must be 32 bytes, written as 64 hex digits or base64');
  return key;
}

/**
 * The key-encryption key: KEEL_MASTER_KEY, or in sandbox a key Keel generates once and keeps in
 * `<KEEL_DATA_DIR>/master.key` (mode 0600). Production refuses to start without KEEL_MASTER_KEY
 * (loadConfig enforces it).
 */
export function loadMasterKey(config: Pick<Config, 'KEEL_MASTER_KEY' | 'KEEL_ENV' | 'KEEL_DATA_DIR'>, logger: Logger): Buffer {
  if (config.KEEL_MASTER_KEY) return parseMasterKey(config.KEEL_MASTER_KEY);
  if (config.KEEL_ENV === 'production') throw new Error('KEEL_MASTER_KEY is required in production');
  const file = path.resolve(config.KEEL_DATA_DIR, 'master.key');
  if (fs.existsSync(file)) return parseMasterKey(fs.readFileSync(file, 'utf8'));
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  try {
    fs.writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    // Another process of this deployment wrote it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return parseMasterKey(fs.readFileSync(file, 'utf8'));
    throw e;
  }
  logger.warn({ file }, 'KEEL_MASTER_KEY is not set: generated a sandbox key-encryption key; set KEEL_MASTER_KEY before holding anything of value');
  return key;
}
