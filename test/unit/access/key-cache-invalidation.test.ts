import { randomBytes, randomUUID } from 'node:crypto';
import { Authenticator, Credentials } from '../../../src/platform/auth/authenticator';
import { generateApiKey } from '../../../src/platform/auth/api-key-secret';
import { ACCESS_TOKEN_KEY_PURPOSE, AccessTokenSigner } from '../../../src/platform/auth/access-tokens';
import { KeyReader, KeyRow } from '../../../src/platform/auth/key-rows';
import { SecretBox } from '../../../src/platform/crypto/secret-box';
import { isKeelError } from '../../../src/platform/errors';

/**
 * The key table as a node sees it: a read takes the row as it is when the read starts, and a held
 * read answers only when released — a lookup that began before a revocation committed.
 */
class KeyTable implements KeyReader {
  reads = 0;
  private held?: { gate: Promise<void>; reading: () => void };

  constructor(public row: KeyRow) {}

  /** Holds the next read until `release` is called; `reading` settles once that read has taken its row. */
  holdNextRead(): { reading: Promise<void>; release: () => void } {
    let release!: () => void;
    let reading!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started = new Promise<void>((resolve) => (reading = resolve));
    this.held = { gate, reading };
    return { reading: started, release };
  }

  async bySecretHash(): Promise<KeyRow & { expiresAt: Date | null }> {
    return { ...(await this.read()), expiresAt: null };
  }

  byId(): Promise<KeyRow> {
    return this.read();
  }

  private async read(): Promise<KeyRow> {
    this.reads++;
    const seen = { ...this.row };
    const held = this.held;
    this.held = undefined;
    held?.reading();
    await held?.gate;
    return seen;
  }
}

const signer = new AccessTokenSigner(new SecretBox(randomBytes(32)).deriveKeys(ACCESS_TOKEN_KEY_PURPOSE));
const apiKey = generateApiKey('pro', 'sandbox').secret;
const liveKey: KeyRow = { id: randomUUID(), organizationId: randomUUID(), host: 'pro', environment: 'sandbox', scopes: ['orderbook_market:read'], tier: 'Pro', revokedAt: null, isOperator: false, agentId: null, generation: 0 };
const credentials: Credentials = { apiKey, orgId: liveKey.organizationId };

function authenticatorOver(keys: KeyTable): Authenticator {
  return new Authenticator(keys, 'sandbox', 5000, 'auth:invalidate', 100, signer);
}

async function verdict(work: () => unknown): Promise<string> {
  try {
    await work();
  } catch (error) {
    if (isKeelError(error)) return `${error.status} ${error.code}: ${error.message}`;
    throw error;
  }
  return 'accepted';
}

describe('the per-node key cache', () => {
  test('answers a key again from the cache, without reading it, while nothing was forgotten', async () => {
    const keys = new KeyTable(liveKey);
    const authenticator = authenticatorOver(keys);
    expect(await verdict(() => authenticator.principalFor('pro', credentials))).toBe('accepted');
    expect(await verdict(() => authenticator.principalFor('pro', credentials))).toBe('accepted');
    expect(keys.reads).toBe(1);
  });

  test('does not keep a key read before its revocation committed, when the revocation is forgotten while the read is under way', async () => {
    const keys = new KeyTable(liveKey);
    const authenticator = authenticatorOver(keys);
    const { reading, release } = keys.holdNextRead();
    const racing = verdict(() => authenticator.principalFor('pro', credentials));
    await reading;
    // The revocation commits and its broadcast reaches this node while the read is still out.
    keys.row = { ...liveKey, revokedAt: new Date() };
    authenticator.forget(liveKey.id);
    release();
    // The request that raced the revocation is answered with what it read...
    expect(await racing).toBe('accepted');
    // ...and nothing after the broadcast is.
    expect(await verdict(() => authenticator.principalFor('pro', credentials))).toBe('401 UNAUTHORIZED: This API key has been revoked');
  });

  test("does not keep a key read before its rotation committed, so the previous generation's access tokens end with the broadcast", async () => {
    const keys = new KeyTable(liveKey);
    const authenticator = authenticatorOver(keys);
    const { token } = await signer.sign({ organizationId: liveKey.organizationId, apiKeyId: liveKey.id, keyGeneration: 0, host: 'pro', environment: 'sandbox', scopes: liveKey.scopes, channels: null }, 60);
    const { reading, release } = keys.holdNextRead();
    const racing = verdict(() => authenticator.authenticate('pro', { token }));
    await reading;
    keys.row = { ...liveKey, generation: 1 };
    authenticator.forget(liveKey.id);
    release();
    expect(await racing).toBe('accepted');
    expect(await verdict(() => authenticator.authenticate('pro', { token }))).toBe('401 INVALID_TOKEN: The API key that issued this access token has been rotated since; ask for a new token');
  });
});

describe('the per-node caches are bounded', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const anotherKey = () => ({ apiKey: generateApiKey('pro', 'sandbox').secret, orgId: liveKey.organizationId });

  test('a key whose cache entry has expired is dropped from the cache, not kept until it is presented again', async () => {
    const authenticator = new Authenticator(new KeyTable(liveKey), 'sandbox', 30, 'auth:invalidate', 100, signer);
    for (let i = 0; i < 50; i++) expect(await verdict(() => authenticator.principalFor('pro', anotherKey()))).toBe('accepted');
    expect(authenticator.cachedKeys).toBe(50);
    await sleep(120);
    expect(authenticator.cachedKeys).toBe(0);
  });

  test('holds at most its number of keys, the least recently used going first; a key it let go is read again', async () => {
    const keys = new KeyTable(liveKey);
    const authenticator = new Authenticator(keys, 'sandbox', 60_000, 'auth:invalidate', 100, signer, 10);
    const first = anotherKey();
    expect(await verdict(() => authenticator.principalFor('pro', first))).toBe('accepted');
    for (let i = 0; i < 100; i++) expect(await verdict(() => authenticator.principalFor('pro', anotherKey()))).toBe('accepted');
    expect(authenticator.cachedKeys).toBe(10);
    const reads = keys.reads;
    expect(await verdict(() => authenticator.principalFor('pro', first))).toBe('accepted');
    expect(keys.reads).toBe(reads + 1);
  });

  test('an access token is dropped from the verified-token cache once it expires, and the cache holds at most its number of tokens', async () => {
    const tokens = new AccessTokenSigner(new SecretBox(randomBytes(32)).deriveKeys(ACCESS_TOKEN_KEY_PURPOSE), { cachedTokens: 20 });
    const grant = { organizationId: liveKey.organizationId, apiKeyId: liveKey.id, keyGeneration: 0, host: 'pro' as const, environment: 'sandbox' as const, scopes: liveKey.scopes, channels: null };
    const shortLived = await Promise.all(Array.from({ length: 5 }, () => tokens.sign(grant, 1)));
    for (const { token } of shortLived) await tokens.verify(token, 'pro', 'sandbox');
    expect(tokens.cachedTokens).toBe(5);
    await sleep(Math.max(...shortLived.map((t) => t.expiresAt.getTime())) - Date.now() + 50);
    expect(tokens.cachedTokens).toBe(0);
    // Presented again, an expired token is still TOKEN_EXPIRED.
    expect(await verdict(() => tokens.verify(shortLived[0].token, 'pro', 'sandbox'))).toBe('401 TOKEN_EXPIRED: The access token has expired; ask for a new one');

    for (let i = 0; i < 50; i++) await tokens.verify((await tokens.sign(grant, 60)).token, 'pro', 'sandbox');
    expect(tokens.cachedTokens).toBe(20);
  });
});
