import { randomUUID } from 'node:crypto';
import { address, generateKeyPairSigner, Signature } from '@solana/kit';
import { SolanaDevnet, startSolanaDevnet } from '../../src/platform/solana-devnet/devnet';
import { SolanaChain } from '../../src/platform/chain-port/solana-chain';
import { formatChainsConfig, parseChainsConfig } from '../../src/modules/chains/chain-config';
import { devSolanaSpec } from '../../src/modules/chains/chain-networks';
import { startTestKeel, TestKeel, TestOrg } from '../support/keel';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { ApiClient, ApiResponse } from '../support/api-client';
import { eventually } from '../support/eventually';

/**
 * Fault: a Keel process (api and worker roles) sending a Solana withdrawal is killed with SIGKILL
 * right after the line's signed transaction is recorded and before it is broadcast (failpoint
 * solana-transfer:recorded). A restarted Keel on the same database, retried with the same
 * Idempotency-Key, answers the same transfer and sends it once: round 1 restarts at once (the
 * recorded transaction is sent, or replaced if its blockhash expired meanwhile), round 2 restarts
 * only once the recorded transaction's blockhash has expired at finalized (a new one is prepared,
 * the old signature kept in replacedTxHashes, and the old never lands). Either way: one transaction
 * on chain, the recipient holds the amount once, the sender paid it and one fee.
 */
const AMOUNT = 250_000_000n;

let devnet: SolanaDevnet;
let chain: SolanaChain;
let t: TestKeel;
let org: TestOrg;
let keel: KeelProcess | undefined;
let chainsConfig: string;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 16 });
  chain = new SolanaChain({ rpcUrl: devnet.rpcUrl });
  chainsConfig = formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), devSolanaSpec(devnet.rpcUrl)]);
  t = await startTestKeel({ KEEL_ROLES: 'api', KEEL_CHAINS: chainsConfig });
  org = await t.createOrg();
});
afterAll(async () => {
  if (keel) await stopKeelProcess(keel.child, 'SIGKILL');
  await t?.stop();
  await devnet?.stop();
});

async function startKeelChild(armed: boolean): Promise<ApiClient> {
  keel = await startKeelProcess(t.config, 'api,worker', {
    KEEL_CHAINS: chainsConfig,
    RATE_LIMIT_SCALE: '100',
    CHAIN_POLL_INTERVAL_MS: '100',
    TRANSFER_POLL_INTERVAL_MS: '100',
    IDEMPOTENCY_LOCK_SECONDS: '1',
    KEEL_FAILPOINTS: armed ? 'solana-transfer:recorded' : '',
  });
  return new ApiClient(keel.coreUrl!, org.core.credentials);
}

function exitOf(child: KeelProcess['child']): Promise<NodeJS.Signals | number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode ?? child.exitCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
}

const statusOf = async (signature: string) => (await chain.rpc.getSignatureStatuses([signature as Signature], { searchTransactionHistory: true }).send()).value[0];

test('a Solana withdrawal recorded just before a SIGKILL is sent exactly once after a restart and a retry (at once, and after its blockhash expired)', async () => {
  let api = await startKeelChild(true);
  const solanaId = ((await api.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => !c.isEvmCompatible)!.id;
  const sol = (await api.get(`/v1/assets?blockchainId=${solanaId}&limit=100`)).body.data.find((a: { symbol: string }) => a.symbol === 'SOL');
  const wallet = (await api.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Crash payouts' })).body.data as { id: string; walletAddress: string };
  const funded = await api.post('/v1/dev/faucet', { blockchainId: solanaId, address: wallet.walletAddress, amount: '2' });
  expect(funded.status).toBe(200);
  await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash: funded.body.data.txHash, direction: 'incoming' }).first()) !== undefined, 60_000);

  for (const round of [1, 2]) {
    if (round === 2) {
      // Armed again for this round.
      await stopKeelProcess(keel!.child, 'SIGTERM');
      api = await startKeelChild(true);
    }
    const key = randomUUID();
    const recipient = (await generateKeyPairSigner()).address;
    const body = { assets: [{ assetId: sol.id, recipient, amount: '0.25' }], note: `solana crash round ${round}` };
    const withdraw = (client: ApiClient) => client.post(`/v1/master-wallets/${wallet.id}/transfer`, body, { 'Idempotency-Key': key });
    const senderBefore = await chain.balance(wallet.walletAddress, { kind: 'native' }, 'final');

    // The answer may or may not beat the sender's step; the process dies once the transaction is recorded.
    const dying = keel!;
    await withdraw(api).catch(() => undefined);
    expect(await exitOf(dying.child)).toBe('SIGKILL');
    const [transfer] = await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id, note: body.note });
    const [line] = await t.keel.platform.db('transfer_items').where({ transferId: transfer.id });
    expect(line).toMatchObject({ status: 'SIGNED', txHash: expect.any(String), rawTx: expect.any(String) });
    // Recorded, not broadcast.
    expect(await statusOf(line.txHash)).toBeNull();

    if (round === 2) {
      // Past its last valid block height at finalized: it can no longer land.
      await eventually(async () => Number(await chain.rpc.getBlockHeight({ commitment: 'finalized' }).send()) > Number(line.validThrough), 60_000, 200);
    }
    api = await startKeelChild(false);
    const retry = await eventually(async () => {
      const res: ApiResponse = await withdraw(api);
      return res.status !== 409 && res;
    }, 20_000);
    // 201, or the stored answer replayed (the first request may have been answered before the crash).
    expect([200, 201]).toContain(retry.status);
    expect(retry.body.data.id).toBe(transfer.id);

    const settled = await eventually(async () => {
      const res = await api.get(`/v1/transfers/${transfer.id}`);
      return ['CONFIRMED', 'FAILED'].includes(res.body.data.status) && res.body.data;
    }, 60_000, 200);
    expect(settled.status).toBe('CONFIRMED');
    const sent = settled.items[0];
    if (round === 2) {
      expect(sent.txHash).not.toBe(line.txHash);
      expect(sent.replacedTxHashes).toEqual([line.txHash]);
      expect(await statusOf(line.txHash)).toBeNull();
    } else {
      // The recorded transaction was sent, or replaced if its blockhash expired during the restart.
      expect(sent.txHash === line.txHash || sent.replacedTxHashes.includes(line.txHash)).toBe(true);
    }
    // Exactly one transaction on chain: the recipient's only one, the amount once, one fee.
    expect((await chain.rpc.getSignaturesForAddress(address(recipient)).send()).map((s) => s.signature)).toEqual([sent.txHash]);
    expect(await chain.balance(recipient, { kind: 'native' }, 'final')).toBe(AMOUNT);
    const fee = BigInt(Math.round(Number(sent.gasFee) * 1e9));
    expect(await chain.balance(wallet.walletAddress, { kind: 'native' }, 'final')).toBe(senderBefore - AMOUNT - fee);
    expect(await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id, note: body.note })).toHaveLength(1);
  }
}, 300_000);
