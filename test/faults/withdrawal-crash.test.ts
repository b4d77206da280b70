import { randomUUID } from 'node:crypto';
import { ethers } from 'ethers';
import { startTestKeel, TestKeel, TestOrg } from '../support/keel';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { ApiClient, ApiResponse } from '../support/api-client';
import { eventually } from '../support/eventually';

/**
 * Fault: a Keel process (api and worker roles, on the run's dev chain) is killed with SIGKILL
 * right after a withdrawal commits and before it answers (failpoint after-commit:withdrawal).
 * The client retries with the same Idempotency-Key against a restarted Keel on the same database.
 * Survives: exactly one transfer recorded, exactly one transaction on the chain (the recipient
 * holds the amount once, the sender's nonce moved by one), and the retry gets the committed transfer.
 */
const ROUNDS = 3;
const AMOUNT = '0.01';
const CHILD_ENV = {
  RATE_LIMIT_SCALE: '100',
  CHAIN_POLL_INTERVAL_MS: '100',
  TRANSFER_POLL_INTERVAL_MS: '100',
  IDEMPOTENCY_LOCK_SECONDS: '1',
  KEEL_FAILPOINTS: 'after-commit:withdrawal',
};

let t: TestKeel;
let org: TestOrg;
let keel: KeelProcess | undefined;
let provider: ethers.JsonRpcProvider;
let chainId: string;

beforeAll(async () => {
  t = await startTestKeel({ KEEL_ROLES: 'api' });
  org = await t.createOrg();
  chainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
  provider = t.keel.services.networks.get(chainId)!.provider;
});
afterAll(async () => {
  if (keel) await stopKeelProcess(keel.child, 'SIGKILL');
  await t?.stop();
});

/** A Keel child process armed with the failpoint; a retry does not run the work, so it never trips it. */
async function startKeelChild(): Promise<ApiClient> {
  keel = await startKeelProcess(t.config, 'api,worker', CHILD_ENV);
  return new ApiClient(keel.coreUrl!, org.core.credentials);
}

function exitOf(child: KeelProcess['child']): Promise<NodeJS.Signals | number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode ?? child.exitCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
}

test(`a withdrawal committed just before a SIGKILL is sent once and replayed to the retry (${ROUNDS} rounds)`, async () => {
  let api = await startKeelChild();
  const wallet = (await api.post('/v1/master-wallets', { blockchainId: chainId, name: 'Crash payouts' })).body.data as { id: string; walletAddress: string };
  const eth = (await api.get(`/v1/assets?blockchainId=${chainId}&limit=100`)).body.data.find((a: { symbol: string }) => a.symbol === 'ETH');
  const funded = await api.post('/v1/dev/faucet', { blockchainId: chainId, address: wallet.walletAddress, amount: '1' });
  expect(funded.status).toBe(200);
  await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash: funded.body.data.txHash, direction: 'incoming' }).first()) !== undefined, 30_000);

  for (let round = 1; round <= ROUNDS; round++) {
    const key = randomUUID();
    const recipient = ethers.Wallet.createRandom().address;
    const body = { assets: [{ assetId: eth.id, recipient, amount: AMOUNT }], note: `crash round ${round}` };
    const nonceBefore = await provider.getTransactionCount(wallet.walletAddress, 'latest');
    const withdraw = (client: ApiClient) => client.post(`/v1/master-wallets/${wallet.id}/transfer`, body, { 'Idempotency-Key': key });

    // The process dies after the commit, before any answer.
    const dying = keel!;
    await expect(withdraw(api)).rejects.toThrow();
    expect(await exitOf(dying.child)).toBe('SIGKILL');
    const recorded = await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id, note: body.note });
    expect(recorded).toHaveLength(1);

    // The retry, against a restarted Keel, once the dead process's lock has lapsed (409 until then).
    api = await startKeelChild();
    const retry = await eventually(async () => {
      const res: ApiResponse = await withdraw(api);
      return res.status !== 409 && res;
    }, 15_000);
    expect(retry.status).toBe(201);
    expect(retry.body.data.id).toBe(recorded[0].id);

    const settled = await eventually(async () => {
      const res = await api.get(`/v1/transfers/${recorded[0].id}`);
      return ['CONFIRMED', 'FAILED'].includes(res.body.data.status) && res.body.data;
    }, 30_000);
    expect(settled.status).toBe('CONFIRMED');
    expect(await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id, note: body.note })).toHaveLength(1);
    expect(await provider.getBalance(recipient)).toBe(ethers.parseEther(AMOUNT));
    expect(await provider.getTransactionCount(wallet.walletAddress, 'latest')).toBe(nonceBefore + 1);
  }
  // Each round starts a Keel process from the TypeScript sources: seconds each on an idle machine, 15 s on a busy one.
}, 240_000);
