import { randomBytes, randomUUID } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import { SecretBox } from '../../../src/platform/crypto/secret-box';
import { ACCESS_TOKEN_KEY_PURPOSE, AccessTokenGrant, AccessTokenSigner, TokenPrincipal } from '../../../src/platform/auth/access-tokens';
import { Principal } from '../../../src/platform/auth/principal';
import { isKeelError } from '../../../src/platform/errors';
import { parseRealtimeChannel } from '../../../src/modules/access-tokens/realtime-channels';

const grant: AccessTokenGrant = { organizationId: randomUUID(), apiKeyId: randomUUID(), keyGeneration: 0, host: 'pro', environment: 'sandbox', scopes: ['orderbook_market:read'], channels: ['book:ETH-USDC'] };

function signerOf(box: SecretBox): AccessTokenSigner {
  return new AccessTokenSigner(box.deriveKeys(ACCESS_TOKEN_KEY_PURPOSE));
}

async function refusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (isKeelError(error)) return `${error.status} ${error.code}`;
    throw error;
  }
  return 'accepted';
}

describe('the signing key, derived from KEEL_MASTER_KEY', () => {
  const oldMaster = randomBytes(32);
  const newMaster = randomBytes(32);

  test('is not the master key itself, and is named by the master key id', async () => {
    const box = new SecretBox(oldMaster);
    const [derived] = box.deriveKeys(ACCESS_TOKEN_KEY_PURPOSE);
    expect(derived.id).toBe(box.currentKeyId);
    expect(Buffer.compare(derived.key, oldMaster)).not.toBe(0);
    expect(derived.key).toHaveLength(32);
    const { token } = await signerOf(box).sign(grant, 60);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'HS256', kid: box.currentKeyId });
  });

  test('rotates: during a rotation tokens of the previous key still verify, after it they are INVALID_TOKEN', async () => {
    const { token } = await signerOf(new SecretBox(oldMaster)).sign(grant, 60);
    const rotating = signerOf(new SecretBox(newMaster, [oldMaster]));
    expect(await rotating.verify(token, 'pro', 'sandbox')).toMatchObject({ organizationId: grant.organizationId, apiKeyId: grant.apiKeyId, scopes: grant.scopes, channels: grant.channels });
    // New tokens are signed with the new key.
    const fresh = await rotating.sign(grant, 60);
    expect(decodeProtectedHeader(fresh.token).kid).toBe(new SecretBox(newMaster).currentKeyId);
    expect(await refusal(signerOf(new SecretBox(newMaster)).verify(token, 'pro', 'sandbox'))).toBe('401 INVALID_TOKEN');
  });

  test('binds a token to its host and environment', async () => {
    const signer = signerOf(new SecretBox(oldMaster));
    const { token } = await signer.sign(grant, 60);
    expect(await refusal(signer.verify(token, 'pro', 'sandbox'))).toBe('accepted');
    expect(await refusal(signer.verify(token, 'core', 'sandbox'))).toBe('401 INVALID_TOKEN');
    expect(await refusal(signer.verify(token, 'pro', 'production'))).toBe('401 INVALID_TOKEN');
  });
});

describe('a token principal', () => {
  const key = new Principal(grant.organizationId, grant.apiKeyId, 'pro', 'sandbox', new Set(['orderbook_market:read', 'orderbook_order:read']), 'Pro', false);

  test('may use only the channels its token names', () => {
    const principal = new TokenPrincipal({ ...grant, tokenId: randomUUID(), expiresAt: new Date(Date.now() + 60_000) }, key);
    expect(principal.mayUseChannel('book:ETH-USDC')).toBe(true);
    expect(principal.mayUseChannel('trades:ETH-USDC')).toBe(false);
    expect(principal.mayUseChannel('orders')).toBe(false);
    expect(principal.tier).toBe('Pro');
  });

  test('without channels may use every channel; keys may too', () => {
    const principal = new TokenPrincipal({ ...grant, channels: null, tokenId: randomUUID(), expiresAt: new Date() }, key);
    expect(principal.mayUseChannel('orders')).toBe(true);
    expect(key.mayUseChannel('book:BTC-USDC')).toBe(true);
  });

  test('keeps only the scopes its issuing key still grants', () => {
    const principal = new TokenPrincipal({ ...grant, scopes: ['orderbook_market:read', 'orderbook_order:create'], tokenId: randomUUID(), expiresAt: new Date() }, key);
    expect([...principal.scopes]).toEqual(['orderbook_market:read']);
  });
});

describe('realtime channel names', () => {
  test.each([
    ['book:ETH-USDC', { kind: 'book', market: 'ETH-USDC', permission: 'orderbook_market:read' }],
    ['trades:eth-usdc', { name: 'trades:ETH-USDC', kind: 'trades', market: 'ETH-USDC' }],
    ['ticker:BTC-USDC', { kind: 'ticker' }],
    ['candles:BTC-USDC', { kind: 'candles' }],
    ['orders', { kind: 'orders', permission: 'orderbook_order:read' }],
    ['fills', { kind: 'fills' }],
    ['balances', { kind: 'balances' }],
  ])('%s is a channel', (name, expected) => {
    expect(parseRealtimeChannel(name)).toMatchObject(expected);
  });

  test.each(['book', 'book:', 'book:ETHUSDC', 'depth:ETH-USDC', 'orders:ETH-USDC', 'Orders', 'book:ETH-USDC ', '*'])('%p is not', (name) => {
    expect(parseRealtimeChannel(name)).toBeUndefined();
  });
});
