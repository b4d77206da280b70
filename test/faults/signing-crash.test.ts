import { randomUUID } from 'node:crypto';
import { ethers } from 'ethers';
import { startTestKeel, TestKeel, TestOrg } from '../support/keel';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { ApiClient } from '../support/api-client';

/**
 * Fault: a Keel child process (api role) is killed with SIGKILL right after a signing request
 * committed (failpoint after-commit:signing.sign), before it answered. The client retries with the
 * same Idempotency-Key on a live node of the same database.
 * Survives: the retry is answered with the committed signature, one record and one
 * master.signed_success event exist, and nothing is signed a second time.
 */
let t: TestKeel;
let org: TestOrg;
let child: KeelProcess | undefined;

beforeAll(async () => {
  t = await startTestKeel({ KEEL_ROLES: 'api' });
  org = await t.createOrg();
});
afterAll(async () => {
  if (child) await stopKeelProcess(child.child, 'SIGKILL');
  await t?.stop();
});

test('a signing request killed after it committed is answered on retry with the signature it committed, recorded and announced once', async () => {
  const chainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Crash signer' })).body.data;
  child = await startKeelProcess(t.config, 'api', { RATE_LIMIT_SCALE: '100', KEEL_FAILPOINTS: 'after-commit:signing.sign' });
  const dying = new ApiClient(child.coreUrl!, org.core.credentials);
  const key = randomUUID();
  const send = (client: ApiClient) => client.post(`/v1/master-wallets/${wallet.id}/sign/message`, { message: 'crash test' }, { 'Idempotency-Key': key });

  await expect(send(dying)).rejects.toThrow();
  const db = t.keel.platform.db;
  const records = await db('signing_requests').where({ masterWalletId: wallet.id });
  expect(records).toHaveLength(1);

  const retry = await send(org.core);
  expect(retry.status).toBe(201);
  expect(retry.body.data).toMatchObject({ id: records[0].id, status: 'SIGNED', signature: records[0].signature });
  expect(ethers.verifyMessage('crash test', retry.body.data.signature)).toBe(wallet.walletAddress);
  expect(await db('signing_requests').where({ masterWalletId: wallet.id }).count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);
  const events = await db('outbox_events').where({ type: 'master.signed_success' }).select('envelope');
  expect(events.filter((e) => e.envelope.data.signatureId === records[0].id)).toHaveLength(1);
}, 120_000);
