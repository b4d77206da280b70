import { randomUUID } from 'node:crypto';
import { BookKeel, BookOrg, marketBody, units } from '../orderbook/support';
import { eventually } from '../../support/eventually';
import { startTestKeel } from '../../support/keel';

/**
 * Idempotency that survives a crash: the work's result is recorded on the claim in the work's own
 * transaction, so a retry after a crash between that commit and the stored response replays the
 * work instead of doing it again. The crash is simulated by putting the claim in the state a
 * killed process leaves it: results recorded, no stored response, a lock nobody holds any more.
 * (test/faults/withdrawal-crash.test.ts kills a real process.)
 */
let k: BookKeel;
let org: BookOrg;
let ETH: { id: string; decimals: number; blockchainId: string };
let USDC: { id: string; decimals: number; blockchainId: string };
let walletId: string;

beforeAll(async () => {
  k = await BookKeel.start({ IDEMPOTENCY_PURGE_INTERVAL_MS: 200 });
  org = await k.createOrg();
  ({ ETH, USDC } = await k.assets());
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  walletId = await k.wallet(org);
  await k.credit(org, walletId, USDC.id, units('10000', USDC.decimals));
});
afterAll(() => k?.stop());

const claimRow = (key: string) => k.db('idempotency_keys').where({ key }).first();

/** What a SIGKILL after the work's commit leaves behind. */
async function crashAfterCommit(key: string, lockAge = '1 hour'): Promise<void> {
  const updated = await k.db('idempotency_keys')
    .where({ key })
    .update({ responseStatus: null, responseBody: null, responseContentType: null, lockedAt: k.db.raw(`now() - ?::interval`, [lockAge]) });
  expect(updated).toBe(1);
  expect(Object.keys((await claimRow(key)).results)).not.toHaveLength(0);
}

const countRows = async (table: string, where: Record<string, unknown>) => Number((await k.db(table).where(where).count<{ count: string }[]>('* as count'))[0].count);

describe('a retry after a crash that followed the commit replays the committed work', () => {
  test('API key creation (REST): the same key and secret, one key, and no plaintext secret at rest', async () => {
    const key = randomUUID();
    const body = { name: 'crash-key', scopes: ['read'] };
    const first = await org.core().post('/v1/api-keys', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    const secret: string = first.body.data.secret;
    await crashAfterCommit(key);
    expect(JSON.stringify(await claimRow(key))).not.toContain(secret);

    const retry = await org.core().post('/v1/api-keys', body, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(retry.body.data).toEqual(first.body.data);
    expect(await countRows('api_keys', { organizationId: org.orgId, name: 'crash-key' })).toBe(1);
    // The retry's answer is stored for the next one, sealed as well.
    expect(JSON.stringify(await claimRow(key))).not.toContain(secret);
    const again = await org.core().post('/v1/api-keys', body, { 'Idempotency-Key': key });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.secret).toBe(secret);
  });

  test('master wallet creation (GraphQL)', async () => {
    const key = randomUUID();
    const create = () =>
      org.core().graphql('mutation($input: CreateMasterWalletInput!) { createMasterWallet(input: $input) { id name walletAddress createdAt } }', { input: { blockchainId: ETH.blockchainId, name: 'crash-wallet' } }, { 'Idempotency-Key': key });
    const first = await create();
    expect(first.body.errors).toBeUndefined();
    await crashAfterCommit(key);
    const retry = await create();
    expect(retry.body).toEqual(first.body);
    expect(await countRows('master_wallets', { organizationId: org.orgId, name: 'crash-wallet' })).toBe(1);
  });

  test('webhook subscription (REST): the same signing secret, one subscription', async () => {
    const key = randomUUID();
    const body = { url: 'https://93.184.216.34/hooks/crash', name: 'crash-hook', eventTypes: ['master.*'] };
    const first = await org.core().post('/v1/webhooks', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    await crashAfterCommit(key);
    expect(JSON.stringify(await claimRow(key))).not.toContain(first.body.data.secret);
    const retry = await org.core().post('/v1/webhooks', body, { 'Idempotency-Key': key });
    expect(retry.body.data).toEqual(first.body.data);
    expect(await countRows('webhook_subscriptions', { organizationId: org.orgId, name: 'crash-hook' })).toBe(1);
  });

  test('order placement (REST, group-committed in one statement): one order, the same answer, one lock', async () => {
    const key = randomUUID();
    const body = { walletId, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: '100', quantity: '1' };
    const first = await org.pro().post('/v1/orderbook/orders', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    const locked = (await org.pro().get(`/v1/orderbook/wallets/${walletId}/balances`)).body.data.find((b: { symbol: string }) => b.symbol === 'USDC').locked;
    await crashAfterCommit(key);
    const retry = await org.pro().post('/v1/orderbook/orders', body, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(retry.body.data.id).toBe(first.body.data.id);
    expect(await countRows('orders', { organizationId: org.orgId })).toBe(1);
    const after = (await org.pro().get(`/v1/orderbook/wallets/${walletId}/balances`)).body.data.find((b: { symbol: string }) => b.symbol === 'USDC').locked;
    expect(after).toBe(locked);
  });

  test('order cancel: the retry gets the cancelled order, not ORDER_NOT_CANCELLABLE', async () => {
    const placed = await org.pro().post('/v1/orderbook/orders', { walletId, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: '90', quantity: '1' });
    expect(placed.status).toBe(201);
    const key = randomUUID();
    const first = await org.pro().delete(`/v1/orderbook/orders/${placed.body.data.id}`, { 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    await crashAfterCommit(key);
    const retry = await org.pro().delete(`/v1/orderbook/orders/${placed.body.data.id}`, { 'Idempotency-Key': key });
    expect(retry.status).toBe(200);
    expect(retry.body.data).toEqual(first.body.data);
  });

  test('two mutations in one GraphQL document are recorded in order and both replayed', async () => {
    const key = randomUUID();
    const doc = () =>
      org.core().graphql('mutation { a: createApiKey(input: {name: "crash-a", scopes: ["read"]}) { id secret } b: createApiKey(input: {name: "crash-b", scopes: ["read"]}) { id secret } }', undefined, { 'Idempotency-Key': key });
    const first = await doc();
    expect(first.body.errors).toBeUndefined();
    await crashAfterCommit(key);
    const retry = await doc();
    expect(retry.body.data).toEqual(first.body.data);
    expect(await countRows('api_keys', { organizationId: org.orgId, name: 'crash-a' })).toBe(1);
    expect(await countRows('api_keys', { organizationId: org.orgId, name: 'crash-b' })).toBe(1);
  });
});

describe('around the recorded results', () => {
  test('a 5xx after the commit keeps the results and unlocks the claim: the retry replays at once', async () => {
    const key = randomUUID();
    const body = { name: 'after-5xx', scopes: ['read'] };
    const first = await org.core().post('/v1/api-keys', body, { 'Idempotency-Key': key });
    await crashAfterCommit(key, '0 seconds');
    const row = await claimRow(key);
    await k.keel.platform.idempotency.release(row.apiKeyId, key);
    expect((await claimRow(key)).lockedAt).toBeNull();
    const retry = await org.core().post('/v1/api-keys', body, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(retry.body.data.secret).toBe(first.body.data.secret);
  });

  test('a GraphQL mutation whose error is 5xx after the commit (answered 200 with errors) is not stored either: the retry gets the created key and its secret', async () => {
    const t = await startTestKeel({ KEEL_FAILPOINTS: 'throw-after-commit:api-key.create' });
    try {
      const o = await t.createOrg();
      const key = randomUUID();
      const create = () => o.core.graphql('mutation { createApiKey(input: {name: "after-graphql-5xx", scopes: ["read"]}) { id name secret } }', undefined, { 'Idempotency-Key': key });
      const failed = await create();
      expect(failed.status).toBe(200);
      expect(failed.body.errors[0].extensions).toMatchObject({ code: 'INTERNAL_ERROR', status: 500 });
      // As after a REST 5xx: no answer stored, the claim unlocked, the committed key recorded on it.
      const claim = await t.keel.platform.db('idempotency_keys').where({ key }).first();
      expect(claim.responseStatus).toBeNull();
      expect(claim.lockedAt).toBeNull();
      expect(Object.keys(claim.results)).toHaveLength(1);

      const retry = await create();
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(retry.body.errors).toBeUndefined();
      expect(retry.body.data.createApiKey.name).toBe('after-graphql-5xx');
      expect(retry.body.data.createApiKey.secret).toEqual(expect.any(String));
      expect(Number((await t.keel.platform.db('api_keys').where({ organizationId: o.orgId, name: 'after-graphql-5xx' }).count<{ count: string }[]>('* as count'))[0].count)).toBe(1);
      // The key the retry handed back is the one created: its secret authenticates.
      const created = o.core.with({ apiKey: retry.body.data.createApiKey.secret, orgId: o.orgId });
      expect((await created.graphql('{ organization { id } }')).body.data.organization.id).toBe(o.orgId);
    } finally {
      await t.stop();
    }
  });

  test('while the crashed claim is still locked a retry is 409, and another body is 422', async () => {
    const key = randomUUID();
    const body = { name: 'still-locked', scopes: ['read'] };
    await org.core().post('/v1/api-keys', body, { 'Idempotency-Key': key });
    await crashAfterCommit(key, '0 seconds');
    const busy = await org.core().post('/v1/api-keys', body, { 'Idempotency-Key': key });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('CONFLICT');
    const other = await org.core().post('/v1/api-keys', { ...body, name: 'other' }, { 'Idempotency-Key': key });
    expect(other.status).toBe(422);
    expect(Object.keys((await claimRow(key)).results)).toHaveLength(1);
  });

  test('the worker purges expired claims on its schedule', async () => {
    const key = randomUUID();
    await org.core().post('/v1/api-keys', { name: 'expiring', scopes: ['read'] }, { 'Idempotency-Key': key });
    await k.db('idempotency_keys').where({ key }).update({ expiresAt: k.db.raw(`now() - interval '1 second'`) });
    await eventually(async () => (await claimRow(key)) === undefined);
  });
});
