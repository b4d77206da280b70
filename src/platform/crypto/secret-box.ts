import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { keptInDataFolder } from '../data-folder';

const KEY_BYTES = 32;
const IV_BYTES = 12;
/** v1: `v1.iv.tag.body` (no key named); v2: `v2.<key id>.iv.tag.body`. */
const UNVERSIONED = 'v1';
const FORMAT = 'v2';

/** Names a key without revealing it: the first 8 bytes of a labelled SHA-256 of it. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('keel-master-key-id\0').update(key).digest('hex').slice(0, 16);
}

/**
 * Secrets at rest (wallet mnemonics, webhook signing secrets): AES-256-GCM under the
 * key-encryption key, a fresh IV per secret, and the owning record's id as associated data, so a
 * sealed secret copied onto another row fails to open instead of quietly working for it. Each
 * sealed secret names the key that sealed it, so KEEL_MASTER_KEY can be rotated: secrets sealed
 * under the previous key keep opening until `keel secrets reseal` has moved them to the current one.
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  readonly currentKeyId: string;

  constructor(
    private readonly key: Buffer,
    previous: Buffer[] = [],
  ) {
    for (const k of [key, ...previous]) {
      if (k.length !== KEY_BYTES) throw new Error(`SecretBox: a key must be ${KEY_BYTES} bytes`);
      if (!this.keys.has(keyId(k))) this.keys.set(keyId(k), k);
    }
    this.currentKeyId = keyId(key);
  }

  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, this.currentKeyId, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
  }

  open(sealed: string, boundTo: string): string {
    const { keyIdOf, iv, tag, body } = parseSealed(sealed);
    const candidates = keyIdOf === null ? [...this.keys.values()] : [this.keys.get(keyIdOf)].filter((k): k is Buffer => !!k);
    if (!candidates.length) throw new Error(`SecretBox: sealed under key ${keyIdOf}, which is neither KEEL_MASTER_KEY nor KEEL_MASTER_KEY_PREVIOUS`);
    for (const key of candidates) {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAAD(Buffer.from(boundTo, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      try {
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
      } catch {
        // the next candidate key, if any
      }
    }
    throw new Error('SecretBox: the secret does not open with this key (wrong KEEL_MASTER_KEY, or tampered)');
  }

  /**
   * Keys for another purpose derived from the master keys (HKDF-SHA-256, `purpose` as info), the
   * current one first, each named by its master key's id: what the current key signs, the previous
   * one still verifies during a rotation.
   */
  deriveKeys(purpose: string, bytes = KEY_BYTES): { id: string; key: Buffer }[] {
    return [...this.keys].map(([id, master]) => ({ id, key: Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `keel:${purpose}`, bytes)) }));
  }

  /** Whether a stored text is a sealed secret (either format) rather than plain text stored before sealing began. */
  static isSealed(text: string): boolean {
    return text.startsWith(`${FORMAT}.`) || text.startsWith(`${UNVERSIONED}.`);
  }

  /** Whether the sealed secret is under another key than the current one (or names none). */
  sealedUnderOtherKey(sealed: string): boolean {
    return parseSealed(sealed).keyIdOf !== this.currentKeyId;
  }
}

function parseSealed(sealed: string): { keyIdOf: string | null; iv: string; tag: string; body: string } {
  const [format, ...parts] = sealed.split('.');
  const keyIdOf = format === FORMAT ? (parts.shift() ?? null) : null;
  const [iv, tag, body] = parts;
  if ((format !== FORMAT && format !== UNVERSIONED) || !iv || !tag || body === undefined) throw new Error('SecretBox: not a sealed secret');
  return { keyIdOf, iv, tag, body };
}

export function parseMasterKey(text: string, name = 'KEEL_MASTER_KEY'): Buffer {
  const trimmed = text.trim();
  const key = /^(0x)?[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed.replace(/^0x/, ''), 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== KEY_BYTES) throw new Error(`${name} must be 32 bytes, written as 64 hex digits or base64`);
  return key;
}

/** The box of this deployment: the current key-encryption key and, during a rotation, KEEL_MASTER_KEY_PREVIOUS. */
export function loadSecretBox(config: Pick<Config, 'KEEL_MASTER_KEY' | 'KEEL_MASTER_KEY_PREVIOUS' | 'KEEL_ENV' | 'KEEL_DATA_DIR'>, logger: Logger): SecretBox {
  const previous = config.KEEL_MASTER_KEY_PREVIOUS ? [parseMasterKey(config.KEEL_MASTER_KEY_PREVIOUS, 'KEEL_MASTER_KEY_PREVIOUS')] : [];
  return new SecretBox(loadMasterKey(config, logger), previous);
}

/**
 * The key-encryption key: KEEL_MASTER_KEY, or in sandbox a key Keel generates once and keeps in
 * `<KEEL_DATA_DIR>/master.key` (mode 0600). Production refuses to start without KEEL_MASTER_KEY
 * (loadConfig enforces it).
 */
export function loadMasterKey(config: Pick<Config, 'KEEL_MASTER_KEY' | 'KEEL_ENV' | 'KEEL_DATA_DIR'>, logger: Logger): Buffer {
  if (config.KEEL_MASTER_KEY) return parseMasterKey(config.KEEL_MASTER_KEY);
  if (config.KEEL_ENV === 'production') throw new Error('KEEL_MASTER_KEY is required in production');
  const kept = keptInDataFolder(config.KEEL_DATA_DIR, 'master.key', () => randomBytes(KEY_BYTES).toString('hex'), 0o600);
  if (kept.created) logger.warn({ file: kept.file }, 'KEEL_MASTER_KEY is not set: generated a sandbox key-encryption key; set KEEL_MASTER_KEY before holding anything of value');
  return parseMasterKey(kept.value);
}
