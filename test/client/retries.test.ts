import { ethers } from 'ethers';
import { useTestKeel } from '../support/use-test-keel';
import { eventually } from '../support/eventually';
import { Fault, FaultProxy, ProxiedRequest } from '../support/fault-proxy';
import { createCoreClient, CoreClient, KeelApiError, RetryEvent, RetryOptions, unwrap } from '../../clients/typescript/src';

/**
 * The client's retries against a real Keel, through a loopback proxy that refuses the first
 * attempts of a withdrawal the way a busy or failing deployment would.
 */
const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100 }, { orgs: 1 });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const envelope = (code: string, message: string) => ({ error: { code, message, timestamp: new Date().toISOString(), requestId: `proxy-${code}` } });
const isWithdrawal = (r: ProxiedRequest) => r.method === 'POST' && /^\/v1\/master-wallets\/[^/]+\/transfer$/.test(r.path);

let direct: CoreClient;
let chainId: string;
let ETH: { id: string };
let wallet: { id: string; walletAddress: string };
const proxies: FaultProxy[] = [];

beforeAll(async () => {
  direct = createCoreClient({ baseUrl: t.coreUrl, apiKey: org.adminKey, orgId: org.orgId });
  chainId = (await unwrap(direct.GET('/v1/blockchains'))).data[0].id;
  const assets = await unwrap(direct.GET('/v1/assets', { params: { query: { blockchainId: chainId, limit: 100 } } }));
  ETH = assets.data.find((a) => a.symbol === 'ETH')!;
  wallet = (await unwrap(direct.POST('/v1/master-wallets', { body: { blockchainId: chainId, name: 'Payouts' } }))).data;
  const faucet = await unwrap(direct.POST('/v1/dev/faucet', { body: { blockchainId: chainId, address: wallet.walletAddress, amount: '2' } }));
  // Spendable once the deposit is seen on chain and credited.
  await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash: faucet.data.txHash, direction: 'incoming' }).first()) !== undefined, 30_000);
}, 60_000);
afterAll(() => Promise.all(proxies.map((p) => p.stop())));

/** A client of the core host through a proxy that follows `plan` for the requests `matches` selects. */
async function throughProxy(matches: (r: ProxiedRequest) => boolean, plan: Fault[], retry: RetryOptions = {}) {
  const proxy = new FaultProxy(t.coreUrl, matches, plan);
  proxies.push(proxy);
  const retries: RetryEvent[] = [];
  const keel = createCoreClient({ baseUrl: await proxy.start(), apiKey: org.adminKey, orgId: org.orgId, retry: { baseDelayMs: 50, ...retry, onRetry: (e) => (retries.push(e), retry.onRetry?.(e)) } });
  return { keel, proxy, retries };
}

const withdraw = (keel: CoreClient, recipient: string, amount: string, headers?: Record<string, string>) =>
  keel.POST('/v1/master-wallets/{masterId}/transfer', { params: { path: { masterId: wallet.id } }, headers, body: { assets: [{ assetId: ETH.id, recipient, amount }] } });

test('a withdrawal whose answer is lost (503), then refused 409 NOT_LEADER and 429, is retried under one Idempotency-Key and sent once', async () => {
  const { keel, proxy, retries } = await throughProxy(isWithdrawal, [
    // Keel does the work; the caller gets a 503 instead of its answer.
    { replace: { status: 503, body: envelope('SERVICE_UNAVAILABLE', 'PostgreSQL or Redis briefly unavailable') } },
    { answer: { status: 409, headers: { 'Retry-After': '1' }, body: envelope('NOT_LEADER', 'This node does not lead the shard') } },
    { answer: { status: 429, headers: { 'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 1) }, body: envelope('RATE_LIMIT_EXCEEDED', 'Rate limit exceeded') } },
  ]);
  const recipient = ethers.Wallet.createRandom().address;
  const { data, response } = await withdraw(keel, recipient, '0.1');

  expect(retries.map((r) => [r.status, r.code])).toEqual([[503, 'SERVICE_UNAVAILABLE'], [409, 'NOT_LEADER'], [429, 'RATE_LIMIT_EXCEEDED']]);
  // NOT_LEADER waits the Retry-After it names (plus under 250 ms of jitter); 429 waits at most until the reset.
  expect(retries[1].delayMs).toBeGreaterThanOrEqual(1000);
  expect(retries[1].delayMs).toBeLessThan(1250);
  expect(retries[2].delayMs).toBeLessThan(2250);

  const attempts = proxy.seen.filter(isWithdrawal);
  expect(attempts).toHaveLength(4);
  const keys = new Set(attempts.map((a) => a.headers['idempotency-key']));
  expect(keys.size).toBe(1);
  expect([...keys][0]).toMatch(UUID);

  // The fourth attempt gets the first one's committed result back.
  expect(response.status).toBe(200);
  expect(response.headers.get('idempotent-replayed')).toBe('true');
  const transfer = data!.data;
  const all = await unwrap(direct.GET('/v1/transfers', { params: { query: { masterWalletId: wallet.id, limit: 100 } } }));
  expect(all.data.filter((x) => x.items.some((i) => i.recipient === recipient)).map((x) => x.id)).toEqual([transfer.id]);

  const done = await eventually(async () => {
    const { data: now } = await unwrap(direct.GET('/v1/transfers/{transferId}', { params: { path: { transferId: transfer.id } } }));
    return ['CONFIRMED', 'FAILED', 'REJECTED'].includes(now.status) && now;
  }, 30_000);
  expect(done.status).toBe('CONFIRMED');
  const provider = t.keel.services.networks.get(chainId)!.provider;
  expect(await provider.getBalance(recipient)).toBe(ethers.parseEther('0.1'));
});

test('a withdrawal whose gateway answers 504 while Keel still runs it is retried through 409 IDEMPOTENCY_KEY_IN_PROGRESS to the one transfer it committed', async () => {
  // Keel's chain node is slow: the withdrawal's balance check waits until the test lets it go on.
  const port = t.keel.services.networks.get(chainId)!.port;
  const balance = port.balance.bind(port);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const slow = jest.spyOn(port, 'balance').mockImplementation(async (address, asset) => {
    if (address === wallet.walletAddress) await released;
    return balance(address, asset);
  });
  const key = `payout-${Date.now()}-in-progress`;
  // Keel is running the request: its claim on the key is made, its answer not yet stored.
  const running = () => eventually(async () => (await t.keel.platform.db('idempotency_keys').where({ key }).whereNull('responseStatus').first()) !== undefined, 10_000);
  try {
    const { keel, proxy, retries } = await throughProxy(
      isWithdrawal,
      // The gateway gives up on the first attempt while Keel runs it, and answers 504.
      [{ abandon: { status: 504, body: envelope('GATEWAY_TIMEOUT', 'The upstream did not answer in time') }, after: running }],
      // Keel goes on once the retry has been told the first attempt still runs.
      { onRetry: (e) => e.status === 409 && release() },
    );
    const recipient = ethers.Wallet.createRandom().address;
    const { data, error, response } = await withdraw(keel, recipient, '0.02', { 'Idempotency-Key': key });

    expect(error).toBeUndefined();
    expect(retries.map((r) => [r.status, r.code])).toEqual([[504, 'GATEWAY_TIMEOUT'], [409, 'CONFLICT']]);
    // The 409 waits the Retry-After Keel names (1 s), plus under 250 ms of jitter.
    expect(retries[1].delayMs).toBeGreaterThanOrEqual(1000);
    expect(retries[1].delayMs).toBeLessThan(1250);
    const attempts = proxy.seen.filter(isWithdrawal);
    expect(attempts).toHaveLength(3);
    expect(attempts.map((a) => a.headers['idempotency-key'])).toEqual([key, key, key]);

    // The third attempt gets the first one's committed transfer back, and it is the only one.
    expect(response.status).toBe(200);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    const all = await unwrap(direct.GET('/v1/transfers', { params: { query: { masterWalletId: wallet.id, limit: 100 } } }));
    expect(all.data.filter((x) => x.items.some((i) => i.recipient === recipient)).map((x) => x.id)).toEqual([data!.data.id]);
  } finally {
    release();
    slow.mockRestore();
  }
});

test("the caller's own Idempotency-Key is the one every attempt carries, and a later call with it gets the same transfer", async () => {
  const { keel, proxy } = await throughProxy(isWithdrawal, [{ answer: { status: 503, body: envelope('SERVICE_UNAVAILABLE', 'briefly unavailable') } }]);
  const key = `payout-${Date.now()}`;
  const recipient = ethers.Wallet.createRandom().address;
  const first = await unwrap(withdraw(keel, recipient, '0.01', { 'Idempotency-Key': key }));
  expect(proxy.seen.filter(isWithdrawal).map((a) => a.headers['idempotency-key'])).toEqual([key, key]);

  const again = await withdraw(direct, recipient, '0.01', { 'Idempotency-Key': key });
  expect(again.response.headers.get('idempotent-replayed')).toBe('true');
  expect(again.data!.data.id).toBe(first.data.id);
});

test("a refusal that is not transient is not retried: Keel's 400 INVALID_ADDRESS comes back as a KeelApiError with its code, details and requestId", async () => {
  const { keel, proxy, retries } = await throughProxy(isWithdrawal, []);
  const refusal = await unwrap(withdraw(keel, 'not-an-address', '0.01')).catch((e: unknown) => e);
  expect(refusal).toBeInstanceOf(KeelApiError);
  const error = refusal as KeelApiError;
  expect({ status: error.status, code: error.code }).toEqual({ status: 400, code: 'INVALID_ADDRESS' });
  expect(error.message).toMatch(/assets\.0\.recipient is not a valid EVM address/);
  expect(error.details).toEqual({ fields: [{ field: 'assets.0.recipient', error: 'INVALID_FIELD' }] });
  // The id Keel logged the request under, as its X-Request-Id header says.
  expect(error.requestId).toMatch(/\S/);
  expect(proxy.seen.filter(isWithdrawal)[0].headers['idempotency-key']).toMatch(UUID);
  expect(retries).toEqual([]);
  expect(proxy.seen.filter(isWithdrawal)).toHaveLength(1);
});

test('retries are bounded: a host that keeps answering 503 is asked retries + 1 times, then its refusal is thrown', async () => {
  const isList = (r: ProxiedRequest) => r.method === 'GET' && r.path.startsWith('/v1/transfers');
  const unavailable: Fault = { answer: { status: 503, body: envelope('SERVICE_UNAVAILABLE', 'briefly unavailable') } };
  const { keel, proxy } = await throughProxy(isList, Array(10).fill(unavailable), { retries: 2, baseDelayMs: 10 });
  const refusal = await unwrap(keel.GET('/v1/transfers')).catch((e: unknown) => e);
  expect(refusal).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', requestId: 'proxy-SERVICE_UNAVAILABLE' });
  expect(proxy.seen.filter(isList)).toHaveLength(3);
});
